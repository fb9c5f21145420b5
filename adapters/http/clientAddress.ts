/**
 * The client's address behind reverse proxies (`TRUST_PROXY`), for the per-address rate limit.
 *
 * `TRUST_PROXY=n` trusts the n proxies nearest the server, as Express's `trust proxy` with a number
 * and Fastify's `trustProxy` do: each appends the address it received from to `X-Forwarded-For`,
 * so the client is the n-th address counted from the right, the socket's peer being the 0th. What
 * the client itself wrote to the left of that (a spoofed extra hop) is never read. `0` (the
 * default) ignores the header: without a proxy in front, anyone could name any address.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Context, Option } from "effect"

/** How many reverse proxies in front of the server are trusted to append to `X-Forwarded-For`. */
export class TrustedProxies
  extends Context.Reference<TrustedProxies>()("switchboard/TrustedProxies", { defaultValue: () => 0 })
{}

/** The client's address as the `trusted` nearest proxies saw it; the socket's peer when none is trusted. */
export const clientAddress = (req: HttpServerRequest.HttpServerRequest, trusted: number): Option.Option<string> => {
  const forwarded = req.headers["x-forwarded-for"]
  if (trusted === 0 || forwarded === undefined) return req.remoteAddress
  // Nearest first: the peer, then the addresses the proxies appended, right to left.
  const hops = forwarded.split(",").map((a) => a.trim()).filter((a) => a !== "").reverse()
  // Fewer hops than trusted proxies: the farthest address there is.
  const at = Math.min(trusted, hops.length)
  return at === 0 ? req.remoteAddress : Option.some(hops[at - 1]!)
}
