/**
 * The outbound-URL guard (SSRF): webhook and media URLs must be `https` and every address their
 * host resolves to must be public unicast. Rejected: loopback, private, link-local (cloud metadata
 * 169.254.169.254), CGNAT, multicast, unique-local IPv6, IPv4-mapped/compatible IPv6, NAT64,
 * reserved and unspecified ranges. Checked at registration and again right before each delivery;
 * the HTTP client that then connects (adapters/net/http.ts) re-checks the addresses its own
 * lookup returns, so a DNS-rebinding host cannot switch to a private address in between.
 * `allowPrivate` (OUTBOUND_ALLOW_PRIVATE) lifts both rules for local development.
 */
import { Context, Effect, Layer } from "effect"
import ipaddr from "ipaddr.js"
import { displayUrl } from "../kernel/display.ts"
import { InvalidArgument } from "../kernel/errors.ts"

/** Resolves a host name to every address it has (A and AAAA). */
export interface HostResolver {
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, string>
}
export const HostResolver = Context.GenericTag<HostResolver>("core/HostResolver")

/** Why an address is not public, or null when it is. */
export const blockedRange = (address: string): string | null => {
  if (!ipaddr.isValid(address)) return "not an IP address"
  const parsed = ipaddr.parse(address)
  const range = parsed.range()
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return "an IPv4-mapped IPv6 address"
    // ::a.b.c.d (IPv4-compatible, deprecated) is reported as unicast by ipaddr.js (but ::1 and :: keep their own names).
    if (range === "unicast" && v6.parts.slice(0, 6).every((p) => p === 0)) return "an IPv4-compatible IPv6 address"
  }
  return range === "unicast" ? null : `a ${range} address`
}

const invalid = (url: string, why: string) =>
  new InvalidArgument({ message: `url ${displayUrl(url)} is not allowed: ${why}` })

/** The static rules: scheme, no credentials, host present, no literal private address. */
export const parseOutboundUrl = (raw: string, allowPrivate: boolean): Effect.Effect<URL, InvalidArgument> =>
  Effect.gen(function*() {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return yield* invalid(raw, "not a valid absolute URL")
    }
    if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
      return yield* invalid(raw, "it must use https")
    }
    if (url.username || url.password) return yield* invalid(raw, "credentials in URLs are not accepted")
    if (allowPrivate) return url
    const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase()
    if (host === "localhost" || host.endsWith(".localhost")) return yield* invalid(raw, "it points at localhost")
    if (ipaddr.isValid(host)) {
      const why = blockedRange(host)
      if (why) return yield* invalid(raw, `it points at ${why}`)
    }
    return url
  })

export interface OutboundGuard {
  /** The full check including DNS; run at registration and again before every delivery. */
  readonly check: (raw: string) => Effect.Effect<URL, InvalidArgument>
}
export const OutboundGuard = Context.GenericTag<OutboundGuard>("core/OutboundGuard")

export const layerOutboundGuard = (allowPrivate: boolean) =>
  Layer.effect(
    OutboundGuard,
    Effect.map(HostResolver, (resolver) =>
      OutboundGuard.of({
        check: (raw) =>
          Effect.gen(function*() {
            const url = yield* parseOutboundUrl(raw, allowPrivate)
            if (allowPrivate) return url
            const host = url.hostname.replace(/^\[|\]$/g, "")
            if (ipaddr.isValid(host)) return url
            const addresses = yield* resolver.resolve(host).pipe(
              Effect.mapError((why) => invalid(raw, `its host does not resolve (${why})`))
            )
            if (addresses.length === 0) return yield* invalid(raw, "its host does not resolve")
            for (const a of addresses) {
              const why = blockedRange(a)
              if (why) return yield* invalid(raw, `its host resolves to ${why} (${a})`)
            }
            return url
          })
      }))
  )
