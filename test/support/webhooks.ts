/** Webhook endpoint records for the stores and workers under test, and a local receiver of their deliveries. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { Webhook } from "standardwebhooks"
import type { EndpointRecord } from "../../core/webhooks/model.ts"
import { generateSecret } from "../../core/webhooks/signing.ts"

/** An enabled endpoint of `workspaceId`, subscribed to every event, with a fresh secret; `patch` sets any field. */
export const endpointRecord = (workspaceId: string, patch: Partial<EndpointRecord> = {}): EndpointRecord => ({
  id: crypto.randomUUID(),
  workspaceId,
  url: "https://hooks.example.com/a",
  events: ["*"],
  label: null,
  status: "enabled",
  apiVersion: null,
  createdAt: new Date().toISOString(),
  secret: generateSecret(),
  previousSecrets: [],
  failingSince: null,
  ...patch
})

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
}

export interface Receiver {
  readonly url: (path?: string) => string
  /** Every request, in order of arrival (recorded before it is answered). */
  readonly got: Array<Received>
  /** How to answer a request to `path` (default 200); a promise holds the answer until it settles. */
  answer: (path: string) => Answer | Promise<Answer>
  readonly waitFor: (n: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** An HTTP server on 127.0.0.1 that records each request and answers it as `answer` says. */
export const startReceiver = async (): Promise<Receiver> => {
  const got: Array<Received> = []
  const receiver: Receiver = {
    got,
    answer: () => ({ status: 200 }),
    url: (path = "/hook") => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    waitFor: async (n, timeoutMs = 5000) => {
      const until = Date.now() + timeoutMs
      while (got.length < n) {
        if (Date.now() > until) throw new Error(`receiver got ${got.length} of ${n} requests`)
        await new Promise((r) => setTimeout(r, 5))
      }
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
  const server: Server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d) => (body += d))
    req.on("end", async () => {
      got.push({ path: req.url ?? "", headers: req.headers, body, at: Date.now() })
      const { headers, status } = await receiver.answer(req.url ?? "")
      res.writeHead(status, headers).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return receiver
}

/** A request's event, verified with `secret` by the official Standard Webhooks library (throws when it does not verify). */
export const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, {
    "webhook-id": String(r.headers["webhook-id"]),
    "webhook-timestamp": String(r.headers["webhook-timestamp"]),
    "webhook-signature": String(r.headers["webhook-signature"])
  }) as { type: string; timestamp: string; data: Record<string, unknown> }
