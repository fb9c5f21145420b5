/**
 * Keep-alive on the Node server (issue 20, defect "Keep-alive is dropped"): the app over the memory
 * stores, served by adapters/http/nodeServer.ts on a real socket. Every kind of answer that is
 * written without waiting for I/O (within Node's `request` event, before its parser marks the
 * request complete) keeps the connection: one socket carries them all, none says `Connection: close`.
 */
import { HttpServer } from "@effect/platform"
import { Layer, ManagedRuntime, Option, Redacted } from "effect"
import { Agent, request } from "node:http"
import type { Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HttpAppLive, serve } from "../../adapters/http/app.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import { ADMIN_TOKEN, makeTestApp } from "../support/app.ts"

let app: Awaited<ReturnType<typeof makeTestApp>>
let server: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
let port = 0

beforeAll(async () => {
  app = await makeTestApp()
  const context = await app.runtime.runtime()
  server = ManagedRuntime.make(
    serve().pipe(
      Layer.provideMerge(NodeServer.layer({ port: 0, host: "127.0.0.1" })),
      Layer.provide(HttpAppLive({ adminToken: Option.some(Redacted.make(ADMIN_TOKEN)), testHelpers: true })),
      Layer.provide(Layer.succeedContext(context.context))
    )
  )
  const address = (await server.runPromise(HttpServer.HttpServer)).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  port = address.port
})
afterAll(async () => {
  await server.dispose()
  await app.close()
})

interface Answer {
  readonly status: number
  readonly connection: string | undefined
  readonly socket: Socket
}

/** One request on `agent`; resolves once the body is read, with the socket that carried it. */
const send = (agent: Agent, method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, agent, headers }, (res) => {
      res.resume()
      res.on(
        "end",
        () => resolve({ status: res.statusCode!, connection: res.headers["connection"], socket: req.socket! })
      )
    })
    req.on("error", reject)
    req.end(body)
  })

describe("Node server keep-alive", () => {
  it("keeps one connection across 401s, unknown routes, query 400s, preflights, the spec, reads and a read body", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const key = { authorization: `Bearer ${app.testKey}` }
    const answers: Array<[string, Answer]> = []
    for (let round = 0; round < 2; round++) {
      answers.push(["401", await send(agent, "GET", "/v1/api/contacts")])
      answers.push(["unknown route", await send(agent, "GET", "/v1/api/nowhere", key)])
      answers.push(["query 400", await send(agent, "GET", "/v1/api/contacts?limit=abc", key)])
      answers.push([
        "preflight",
        await send(agent, "OPTIONS", "/v1/api/contacts", {
          origin: "https://a.example",
          "access-control-request-method": "POST"
        })
      ])
      answers.push(["openapi.json", await send(agent, "GET", "/v1/api/openapi.json")])
      answers.push(["read", await send(agent, "GET", "/v1/api/contacts", key)])
      answers.push([
        "create",
        await send(
          agent,
          "POST",
          "/v1/api/contacts",
          { ...key, "content-type": "application/json" },
          JSON.stringify({ firstName: `Ada ${round}` })
        )
      ])
    }
    agent.destroy()
    expect(answers.map(([kind, a]) => [kind, a.status])).toEqual(
      [0, 1].flatMap(
        () => [["401", 401], ["unknown route", 404], ["query 400", 400], ["preflight", 204], ["openapi.json", 200], [
          "read",
          200
        ], ["create", 201]]
      )
    )
    for (const [kind, a] of answers) expect([kind, a.connection]).toEqual([kind, "keep-alive"])
    expect(new Set(answers.map(([, a]) => a.socket)).size).toBe(1)
  })

  it("still closes the connection after answering a request whose body was never read", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    // A 401 is decided before the body is read: the body is left unread, so the connection closes.
    const refused = await send(
      agent,
      "POST",
      "/v1/api/contacts",
      { "content-type": "application/json" },
      JSON.stringify({ firstName: "Ada" })
    )
    const next = await send(agent, "GET", "/v1/api/openapi.json")
    agent.destroy()
    expect([refused.status, refused.connection]).toEqual([401, "close"])
    expect(next.status).toBe(200)
    expect(next.socket).not.toBe(refused.socket)
  })
})
