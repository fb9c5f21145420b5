/**
 * WebhookSender over the outbound HTTP client (public addresses only, checked at connect): no
 * redirects followed (a 3xx is a failed attempt), a hard timeout, body discarded.
 */
import { Effect, Layer } from "effect"
import { WebhookSender } from "../../core/webhooks/store.ts"
import { describeFetchError, OutboundHttp } from "../net/http.ts"

export const layer: Layer.Layer<WebhookSender, never, OutboundHttp> = Layer.effect(
  WebhookSender,
  Effect.map(OutboundHttp, (http) =>
    WebhookSender.of({
      send: ({ url, headers, body, timeoutMs }) =>
        Effect.tryPromise({
          try: async (signal) => {
            const res = await http.fetch(url, {
              method: "POST",
              headers: { "user-agent": "Switchboard-Webhooks/1", ...headers },
              body,
              redirect: "manual",
              signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
            })
            // Nothing of the receiver's answer is kept but its status.
            await res.body?.cancel().catch(() => undefined)
            return { status: res.status }
          },
          catch: (e) =>
            (e as { name?: string }).name === "TimeoutError" ? { error: `timed out after ${timeoutMs} ms` } : { error: describeFetchError(e) }
        }).pipe(Effect.merge)
    })
  )
)
