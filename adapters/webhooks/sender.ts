/** WebhookSender over fetch: no redirects followed (a 3xx is a failed attempt), a hard timeout, body discarded. */
import { Effect, Layer } from "effect"
import { WebhookSender } from "../../core/webhooks/store.ts"

export const layer = Layer.succeed(
  WebhookSender,
  WebhookSender.of({
    send: ({ url, headers, body, timeoutMs }) =>
      Effect.tryPromise({
        try: async (signal) => {
          const res = await fetch(url, {
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
        catch: (e) => {
          const err = e as { name?: string; cause?: { code?: string; message?: string }; message?: string }
          if (err.name === "TimeoutError") return { error: `timed out after ${timeoutMs} ms` }
          return { error: err.cause?.code ?? err.cause?.message ?? err.message ?? "request failed" }
        }
      }).pipe(Effect.merge)
  })
)
