/**
 * WebhookSender over the outbound HTTP client (public addresses only, checked on every new
 * connection; connections kept alive per origin): no redirects followed (a 3xx is a failed
 * attempt), a hard timeout, the answer's body dropped.
 */
import { Duration, Effect, Layer } from "effect"
import { WebhookSender } from "../../core/webhooks/store.ts"
import { describeFetchError, OutboundHttp } from "../net/http.ts"

export const layer: Layer.Layer<WebhookSender, never, OutboundHttp> = Layer.effect(
  WebhookSender,
  Effect.map(OutboundHttp, (http) =>
    WebhookSender.of({
      send: ({ url, headers, body, timeoutMs }) =>
        Effect.tryPromise({
          // Interrupting the fiber (the timeout below) aborts the request through `signal`.
          try: (signal) => http.post(new URL(url), { headers: { "user-agent": "Switchboard-Webhooks/1", ...headers }, body, signal }),
          catch: (e) => ({ error: describeFetchError(e) })
        }).pipe(
          Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => ({ error: `timed out after ${timeoutMs} ms` }) }),
          Effect.map((status) => ({ status })),
          Effect.merge
        )
    })
  )
)
