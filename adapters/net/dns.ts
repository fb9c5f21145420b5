/**
 * HostResolver (core/egress/guard.ts) over the system resolver (A and AAAA), for the outbound-URL guard
 * that webhook endpoints and media URLs both pass. Works on Node and Deno.
 */
import { Effect, Layer } from "effect"
import { lookup } from "node:dns/promises"
import { HostResolver } from "../../core/egress/guard.ts"

export const layer = Layer.succeed(
  HostResolver,
  HostResolver.of({
    resolve: (host) =>
      Effect.tryPromise({
        try: () => lookup(host, { all: true, verbatim: true }),
        catch: (e) => String((e as { code?: string }).code ?? e)
      }).pipe(
        Effect.map((rs) => rs.map((r) => r.address)),
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "DNS lookup timed out" })
      )
  })
)
