/**
 * The typed client (`switchboard/client`, adapters/http/client.ts) against a real server over
 * sockets: typed answers, the API's errors decoded as the core's error classes, each credential
 * sent where it belongs, and an `Idempotency-Key` replay.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClientOptions, makeClient, Switchboard } from "../../adapters/http/client.ts"
import * as Errors from "../../core/kernel/errors.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const ADMIN_TOKEN = "client-admin-token"
const NUMBER = "+14155550100"
const ADA = "+14155550123"

const dataDir = mkdtempSync(join(tmpdir(), "switchboard-client-"))
let server: RunningServer
let options: ClientOptions

beforeAll(async () => {
  server = await startServer("node", { DATA_DIR: dataDir, ADMIN_TOKEN })
  options = { baseUrl: server.baseUrl, apiKey: server.testKey!, adminToken: ADMIN_TOKEN }
}, 300_000)
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const run = <A, E>(program: Effect.Effect<A, E, Switchboard>) =>
  Effect.runPromise(
    program.pipe(Effect.provide(Switchboard.layer(options)), Effect.provide(FetchHttpClient.layer))
  )

describe("the typed client against a real server", () => {
  it("answers typed values and fails with the API's errors, each credential where it belongs", async () => {
    await run(Effect.gen(function*() {
      const switchboard = yield* Switchboard
      // No number yet: 409, decoded as the core's FailedPrecondition.
      const refused = yield* Effect.flip(switchboard.messages.send({ payload: { to: ADA, body: "too early" } }))
      expect(refused).toBeInstanceOf(Errors.FailedPrecondition)
      expect(refused).toMatchObject({
        _tag: "FailedPrecondition",
        message: expect.stringContaining("phone number"),
        requestId: expect.stringMatching(/^req_/)
      })

      // The admin token goes to the admin API.
      const { workspaces: [workspace] } = yield* switchboard.admin.listWorkspaces()
      const { number } = yield* switchboard.admin.addNumber({ path: { id: workspace!.id }, payload: { e164: NUMBER } })
      expect(number.e164).toBe(NUMBER)

      const { contact } = yield* switchboard.contacts.create({ payload: { firstName: "Ada", phone: ADA } })
      expect(contact).toMatchObject({ firstName: "Ada", phones: [{ value: ADA }] })
      expect(yield* switchboard.contacts.get({ path: { id: contact.id } })).toEqual({ contact })

      const missing = yield* Effect.flip(switchboard.contacts.get({ path: { id: crypto.randomUUID() } }))
      expect(missing).toBeInstanceOf(Errors.NotFound)
      expect(missing.message).toBe("No such contact")
      const invalid = yield* Effect.flip(switchboard.contacts.create({ payload: { phone: "not a phone" } }))
      expect(invalid).toBeInstanceOf(Errors.InvalidArgument)
      expect(invalid.message).toMatch(/^phone/)
    }))
  }, 120_000)

  it("replays a send with the same Idempotency-Key", async () => {
    await run(Effect.gen(function*() {
      const switchboard = yield* Switchboard
      const send = switchboard.messages.send({
        headers: { "idempotency-key": crypto.randomUUID() },
        payload: { to: ADA, body: "Your table for two is ready" },
        withResponse: true
      })
      const [first, firstResponse] = yield* send
      const [again, againResponse] = yield* send
      expect(again).toEqual(first)
      expect(firstResponse.headers["idempotency-replayed"]).toBeUndefined()
      expect(againResponse.headers["idempotency-replayed"]).toBe("true")
      const { activities } = yield* switchboard.conversations.get({ path: { id: first.conversationId } })
      expect(activities.filter((a) => a.body === "Your table for two is ready")).toHaveLength(1)
    }))
  }, 120_000)

  it("sends neither credential where the other belongs", async () => {
    const keyOnly = await Effect.runPromise(
      makeClient({ baseUrl: server.baseUrl, apiKey: server.testKey! }).pipe(
        Effect.flatMap((client) => Effect.flip(client.admin.listWorkspaces())),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(keyOnly).toBeInstanceOf(Errors.Unauthenticated)
    const adminOnly = await Effect.runPromise(
      makeClient({ baseUrl: server.baseUrl, adminToken: ADMIN_TOKEN }).pipe(
        Effect.flatMap((client) => Effect.flip(client.contacts.list())),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(adminOnly).toBeInstanceOf(Errors.Unauthenticated)
  }, 120_000)
})
