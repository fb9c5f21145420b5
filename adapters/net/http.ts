/**
 * The HTTP client for URLs customers give us (webhook endpoints, media URLs), on Node and Deno.
 *
 * The outbound-URL guard (core/egress/guard.ts) checks the addresses a host resolves to before each
 * request, but the connection resolves the host again: a DNS-rebinding host could answer a public
 * address to the check and a private one to the connection. Here the connection's own lookup
 * rejects any non-public address, so the address that is checked is the address that is dialled.
 * IP-literal hosts skip the lookup; the guard rejects private literals before a request is made.
 */
import { Context, Effect, Layer } from "effect"
import { lookup as systemLookup, type LookupAddress } from "node:dns"
import { Agent, fetch as undiciFetch } from "undici"
import { blockedRange } from "../../core/egress/guard.ts"
import { displayText } from "../../core/kernel/display.ts"

export interface OutboundHttp {
  readonly fetch: (url: URL | string, init: RequestInit) => Promise<Response>
  /**
   * A POST that keeps only the answer's status: no redirects followed, a short answer read and
   * dropped so the connection stays open for the next request to that origin (a long one closes it).
   * Lighter than `fetch` (no WHATWG Request, Response or Headers objects).
   */
  readonly post: (
    url: URL,
    request: { readonly headers: Readonly<Record<string, string>>; readonly body: string; readonly signal: AbortSignal }
  ) => Promise<number>
}
export const OutboundHttp = Context.GenericTag<OutboundHttp>("adapters/OutboundHttp")

/** The error code of a connection refused because its host resolved to a non-public address. */
export const BLOCKED_ADDRESS = "EBLOCKEDADDRESS"

export type Lookup = (
  hostname: string,
  options: { readonly all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: Array<LookupAddress>) => void
) => void

type ConnectLookup = (
  hostname: string,
  options: { readonly all?: boolean | undefined },
  callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
) => void

/** A connect-time lookup that fails when any address of the host is not public unicast (unless `allowPrivate`). */
export const connectLookup = (resolve: Lookup, allowPrivate: boolean): ConnectLookup => (hostname, options, callback) =>
  resolve(hostname, { all: true }, (error, addresses) => {
    if (error) return callback(error, [])
    for (const { address } of allowPrivate ? [] : addresses) {
      const why = blockedRange(address)
      if (why !== null) {
        return callback(
          Object.assign(new Error(`${hostname} resolves to ${why} (${address})`), { code: BLOCKED_ADDRESS }),
          []
        )
      }
    }
    if (options.all) return callback(null, addresses)
    const first = addresses[0]
    if (first === undefined) {
      return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }), [])
    }
    return callback(null, first.address, first.family)
  })

/**
 * Why a fetch failed, for delivery logs and error messages: the blocked address, else the network
 * code. Error texts may quote the caller's host or URL, so they are shown through displayText.
 */
export const describeFetchError = (e: unknown): string => {
  const err = e as { code?: string; cause?: { code?: string; message?: string }; message?: string } | null
  // fetch wraps the network error in a TypeError (its cause); `post` throws it as it is.
  const cause = err?.cause ?? err
  if (cause?.code === BLOCKED_ADDRESS) return displayText(cause.message ?? BLOCKED_ADDRESS)
  // A DOMException's code is a number (an AbortError's is 20): only a string code names the failure.
  const text = [cause?.code, cause?.message, err?.message].find((t): t is string => typeof t === "string" && t !== "")
  return displayText(text ?? "network error")
}

/** The longest answer `post` reads (and drops) to keep its connection; past it the connection closes. */
const MAX_DROPPED_ANSWER_BYTES = 64 * 1024

/**
 * `allowPrivate` (OUTBOUND_ALLOW_PRIVATE, local development) dials whatever the host resolves to.
 * `resolve` replaces the system resolver in tests.
 */
export const layer = (allowPrivate: boolean, resolve: Lookup = systemLookup as Lookup): Layer.Layer<OutboundHttp> =>
  Layer.scoped(
    OutboundHttp,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => new Agent({ connect: { lookup: connectLookup(resolve, allowPrivate) } })),
        (agent) => Effect.promise(() => agent.close().catch(() => undefined))
      ),
      (agent) =>
        OutboundHttp.of({
          // undici's own fetch: the dispatcher option is only honoured by the undici that made the Agent.
          fetch: (url, init) =>
            undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
          post: async (url, { headers, body, signal }) => {
            const answer = await agent.request({
              origin: url.origin,
              path: `${url.pathname}${url.search}`,
              method: "POST",
              headers,
              body,
              signal
            })
            // The status decides the attempt; the body is drained in the background only to keep the
            // connection, so a receiver slow to finish its answer does not turn a 2xx into a timeout.
            answer.body.dump({ limit: MAX_DROPPED_ANSWER_BYTES }).catch(() => undefined)
            return answer.statusCode
          }
        })
    )
  )
