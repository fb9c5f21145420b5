/**
 * The contract of the agent's storage, run unchanged against memory, PGlite and a real Postgres:
 * AgentStore reads an agent back exactly (draft and published snapshot, every nested field), put
 * replaces, one agent per workspace, and a rolled-back transaction leaves none; NumberStore.setRouting
 * changes only the routing of the workspace's own number; ConversationStore.agentCallMinutes sums the
 * agent's calls of the period, each rounded up to a minute, and nothing else. On SQL, the stored
 * agent row also passes the record's full decode.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { agents } from "../../adapters/sql/tables.ts"
import { type AgentConfig, AgentRecord, newAgentConfig } from "../../core/agent/model.ts"
import { AgentStore } from "../../core/agent/store.ts"
import { newActivity } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { number, ts, uuid } from "./stores.contract.ts"

type Ports = AgentStore | NumberStore | ConversationStore | WorkspaceStore | Transactor | RawAgent

/** Every field set, unicode and quotes included. */
const configured: AgentConfig = Schema.decodeUnknownSync(AgentRecord.fields.draft)({
  name: "Front desk ✓ \"Ada\"",
  greeting: "Thanks for calling — how can I help?\nSay \"agent\" any time.",
  tone: "friendly",
  voice: "Telnyx.NaturalHD.astra",
  language: "en-US",
  instructions: "Book appointments.",
  enabled: false,
  timezone: "America/New_York",
  businessHours: {
    timezone: "America/Chicago",
    monday: [{ start: "09:00", end: "12:00" }, { start: "13:00", end: "17:30" }],
    saturday: [],
    sunday: [{ start: "00:00", end: "23:59" }]
  },
  inHoursAction: "agent",
  offHoursAction: "forward",
  jobs: [{ name: "book", instructions: "Offer the next slot." }, { name: "quote", instructions: "" }]
})

const agentOf = (workspaceId: string, patch: Partial<AgentRecord> = {}): AgentRecord => ({
  id: uuid(),
  workspaceId,
  draft: configured,
  published: null,
  carrierAssistantId: null,
  createdAt: ts(1),
  updatedAt: ts(2),
  publishedAt: null,
  ...patch
})

/** On SQL, a workspace's agent row as the driver gives it; nothing on memory. */
class RawAgent
  extends Context.Tag("test/RawAgent")<RawAgent, Option.Option<(workspaceId: string) => Effect.Effect<unknown>>>()
{}
const noRawRows = Layer.succeed(RawAgent, Option.none())
const sqlRawRows = Layer.effect(
  RawAgent,
  Effect.map(
    SqlClient.SqlClient,
    (sql) =>
      Option.some((workspaceId: string) =>
        Effect.orDie(sql`SELECT * FROM agents WHERE workspace_id = ${workspaceId}`).pipe(Effect.map((rows) => rows[0]))
      )
  )
)

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Agent",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
  return id
})

/** A call activity of `workspaceId` at `createdAt` with this `call` metadata. */
const call = (
  workspaceId: string,
  createdAt: string,
  meta: Record<string, unknown> | null,
  type: "call" | "voicemail" | "message" = "call"
) => newActivity({ id: uuid(), workspaceId, conversationId: uuid(), type, direction: "inbound", call: meta, createdAt })

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("an agent reads back exactly, draft and published snapshot; put replaces; one per workspace", () =>
      Effect.gen(function*() {
        const store = yield* AgentStore
        const ws = uuid()
        const other = uuid()
        assert.deepStrictEqual(yield* store.get(ws), Option.none())
        const draft = agentOf(ws)
        yield* store.put(draft)
        yield* store.put(agentOf(other, { draft: newAgentConfig }))
        assert.deepStrictEqual(yield* store.get(ws), Option.some(draft))
        const published: AgentRecord = {
          ...draft,
          draft: { ...configured, name: "Edited after publishing", jobs: [] },
          published: configured,
          carrierAssistantId: "assistant-7f3a",
          updatedAt: ts(30),
          publishedAt: ts(20)
        }
        yield* store.put(published)
        assert.deepStrictEqual(yield* store.get(ws), Option.some(published))
        assert.deepStrictEqual(Option.map(yield* store.get(other), (a) => a.draft), Option.some(newAgentConfig))
        const raw = yield* RawAgent
        if (Option.isSome(raw)) assert.deepStrictEqual(agents.decodeChecked(yield* raw.value(ws)), published)
      }))

    it.effect("a transaction that rolls back leaves no agent and the previous one unchanged", () =>
      Effect.gen(function*() {
        const store = yield* AgentStore
        const kept = agentOf(uuid())
        yield* store.put(kept)
        const fresh = agentOf(uuid())
        const result = yield* Effect.either(
          (yield* Transactor).withTransaction(
            Effect.gen(function*() {
              yield* store.put({ ...kept, published: kept.draft, publishedAt: ts(9) })
              yield* store.put(fresh)
              return yield* Effect.fail("boom" as const)
            })
          )
        )
        assert.isTrue(result._tag === "Left")
        assert.deepStrictEqual(yield* store.get(kept.workspaceId), Option.some(kept))
        assert.deepStrictEqual(yield* store.get(fresh.workspaceId), Option.none())
      }))

    it.effect("setRouting sets voiceMode, agentId and forwardTo of the workspace's own number only", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const e164 = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`
        const mine = number(e164)
        yield* numbers.insert(ws, mine, uuid())
        const agentId = uuid()
        const routed = yield* numbers.setRouting(ws, e164, { voiceMode: "agent", agentId, forwardTo: "+14155550199" })
        assert.deepStrictEqual(
          routed,
          Option.some({ ...mine, voiceMode: "agent" as const, agentId, forwardTo: "+14155550199" })
        )
        assert.deepStrictEqual(yield* numbers.list(ws), [Option.getOrThrow(routed)])
        assert.deepStrictEqual(Option.map(yield* numbers.findByE164(e164), (r) => r.number), routed)
        // another workspace, or a number nobody has: nothing changes
        assert.deepStrictEqual(
          yield* numbers.setRouting(other, e164, { voiceMode: "voicemail", agentId: null, forwardTo: null }),
          Option.none()
        )
        assert.deepStrictEqual(
          yield* numbers.setRouting(ws, "+14155550000", { voiceMode: "voicemail", agentId: null, forwardTo: null }),
          Option.none()
        )
        assert.deepStrictEqual(yield* numbers.list(ws), [Option.getOrThrow(routed)])
        const back = yield* numbers.setRouting(ws, e164, { voiceMode: "app", agentId: null, forwardTo: null })
        assert.deepStrictEqual(back, Option.some(mine))
        assert.deepStrictEqual(yield* numbers.list(other), [])
      }))

    it.effect("agentCallMinutes: the agent's calls started in [from, to), each rounded up to a minute; nothing else counts", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = uuid()
        const from = "2026-03-01T00:00:00.000Z"
        const to = "2026-04-01T00:00:00.000Z"
        const agentCall = (at: string, durationSeconds: unknown) =>
          call(ws, at, { answeredBy: "agent", durationSeconds, status: "completed" })
        const counted = [
          agentCall(from, 60), // 1: the first instant is in
          agentCall("2026-03-10T12:00:00.000Z", 61), // 2
          agentCall("2026-03-15T12:00:00.000Z", 1), // 1
          agentCall("2026-03-20T12:00:00.000Z", 0.5), // 1
          agentCall("2026-03-31T23:59:59.999Z", 600) // 10
        ]
        const ignored = [
          agentCall(to, 600), // the period's end is out
          agentCall("2026-02-28T23:59:59.999Z", 600),
          agentCall("2026-03-05T00:00:00.000Z", 0), // 0 minutes
          agentCall("2026-03-05T00:00:00.000Z", null), // still ringing
          agentCall("2026-03-05T00:00:00.000Z", "600"), // not a number
          call(ws, "2026-03-05T00:00:00.000Z", { answeredBy: "member", durationSeconds: 600 }),
          call(ws, "2026-03-05T00:00:00.000Z", { durationSeconds: 600 }),
          call(ws, "2026-03-05T00:00:00.000Z", null),
          call(ws, "2026-03-05T00:00:00.000Z", { answeredBy: "agent", durationSeconds: 600 }, "voicemail"),
          call(uuid(), "2026-03-05T00:00:00.000Z", { answeredBy: "agent", durationSeconds: 600 }),
          // A test key's call: nothing was dialled.
          call(ws, "2026-03-05T00:00:00.000Z", { answeredBy: "agent", durationSeconds: 600, simulated: true })
        ]
        for (const a of [...counted, ...ignored]) yield* store.insertActivity(a)
        assert.strictEqual(yield* store.agentCallMinutes(ws, from, to), 15)
        assert.strictEqual(yield* store.agentCallMinutes(ws, "2026-03-10T12:00:00.000Z", "2026-03-15T12:00:00.001Z"), 3)
        assert.strictEqual(yield* store.agentCallMinutes(ws, to, "2026-05-01T00:00:00.000Z"), 10)
        assert.strictEqual(yield* store.agentCallMinutes(uuid(), from, to), 0)
      }))
  })

contract("Agent stores: memory", Layer.merge(MemoryStores.layer, noRawRows))

sqlContract({
  name: (db) => `Agent stores: ${db}`,
  adapter: (client) => sqlRawRows.pipe(Layer.provideMerge(sqlStores(client))),
  suite: contract,
  database: "agent"
})
