/**
 * WebhookSender over the outbound HTTP client (public addresses only, checked on every new
 * connection; connections kept alive per origin): no redirects followed (a 3xx is a failed
 * attempt), a hard timeout, the answer's body dropped.
 *
 * One attempt is one callback: one AbortController serves both the timeout (one timer) and the
 * fiber's interruption. `Effect.timeoutFail` around `Effect.tryPromise` would cost a race of two
 * forked fibers, a second AbortController and a sleep on every attempt.
 */
import { Effect, Layer } from "effect"
import { WebhookSender } from "../../core/webhooks/store.ts"
import { describeFetchError, OutboundHttp } from "../net/http.ts"

export const layer: Layer.Layer<WebhookSender, never, OutboundHttp> = Layer.effect(
  WebhookSender,
  Effect.map(OutboundHttp, (http) =>
    WebhookSender.of({
      send: ({ url, headers, body, timeoutMs }) =>
        Effect.async<{ readonly status: number } | { readonly error: string }>((resume) => {
          const abort = new AbortController()
          let timedOut = false
          const timer = setTimeout(() => {
            timedOut = true
            abort.abort()
          }, timeoutMs)
          http.post(new URL(url), {
            headers: { "user-agent": "Switchboard-Webhooks/1", ...headers },
            body,
            signal: abort.signal
          }).then(
            (status) => {
              clearTimeout(timer)
              resume(Effect.succeed({ status }))
            },
            (e) => {
              clearTimeout(timer)
              // Aborted by an interruption: the fiber is gone and wants no answer.
              if (abort.signal.aborted && !timedOut) return
              resume(Effect.succeed({ error: timedOut ? `timed out after ${timeoutMs} ms` : describeFetchError(e) }))
            }
          )
          // Interrupted (shutdown): stop the timer and abort the request.
          return Effect.sync(() => {
            clearTimeout(timer)
            abort.abort()
          })
        })
    }))
)
