/**
 * The contract of the carrier call session store, run unchanged against memory, PGlite and a real
 * Postgres: a session reads back exactly (route jsonb, nulls, timestamps), a second insert of the
 * same call is refused and changes nothing (a repeated webhook), put replaces, and a rolled-back
 * transaction leaves no session.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { type CallSession, CallSessionStore } from "../../core/calls/sessions.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { defaultBilling } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = CallSessionStore | WorkspaceStore | Transactor

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({ id, name: "Calls", billing: defaultBilling, createdAt: ts(0) })
  return id
})

const sessionOf = (workspaceId: string, patch: Partial<CallSession> = {}): CallSession => ({
  carrierCallId: `v3:${uuid()}`,
  callControlId: `v3:ctl-${uuid()}`,
  workspaceId,
  numberE164: "+13125550100",
  participant: "+15555550123",
  callerName: "Ada \"Lovelace\" ✓",
  direction: "inbound",
  route: { kind: "forward", to: "+13125550199" },
  startedAt: ts(5),
  answeredAt: null,
  answeredBy: null,
  agentId: null,
  job: null,
  activityId: null,
  reservedActivityId: null,
  conversationId: null,
  recordingRefused: false,
  voicemailStep: null,
  pendingRecording: null,
  voicemailTranscript: null,
  ...patch
})

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a session reads back exactly; a second insert of the call is refused and changes nothing; put replaces", () =>
      Effect.gen(function*() {
        const store = yield* CallSessionStore
        const ws = yield* newWorkspace
        const session = sessionOf(ws)
        assert.deepStrictEqual(yield* store.get(session.carrierCallId), Option.none())
        assert.isTrue(yield* store.insert(session))
        assert.deepStrictEqual(yield* store.get(session.carrierCallId), Option.some(session))

        assert.isFalse(yield* store.insert({ ...session, numberE164: "+13125550111", route: { kind: "app" } }))
        assert.deepStrictEqual(yield* store.get(session.carrierCallId), Option.some(session))

        const outbound = sessionOf(ws, {
          direction: "outbound",
          route: null,
          participant: "+15555550999",
          callerName: null,
          agentId: uuid(),
          job: "Reminder",
          reservedActivityId: uuid()
        })
        assert.isTrue(yield* store.insert(outbound))
        const ended = {
          ...session,
          answeredAt: ts(9),
          answeredBy: "agent" as const,
          agentId: uuid(),
          route: { kind: "agent" as const, agentId: uuid() },
          activityId: uuid()
        }
        yield* store.put(ended)
        assert.deepStrictEqual(yield* store.get(session.carrierCallId), Option.some(ended))
        assert.deepStrictEqual(yield* store.get(outbound.carrierCallId), Option.some(outbound))

        // The assistant's conversation finds its call; another conversation finds none.
        const conversationId = `conv-${uuid()}`
        assert.deepStrictEqual(yield* store.findByConversation(conversationId), Option.none())
        const named = { ...ended, conversationId, recordingRefused: true }
        yield* store.put(named)
        assert.deepStrictEqual(yield* store.findByConversation(conversationId), Option.some(named))
        assert.deepStrictEqual(yield* store.findByConversation(`conv-${uuid()}`), Option.none())
      }))

    it.effect("a rolled-back transaction leaves no session", () =>
      Effect.gen(function*() {
        const store = yield* CallSessionStore
        const tx = yield* Transactor
        const session = sessionOf(yield* newWorkspace)
        const rolledBack = yield* Effect.exit(
          tx.withTransaction(Effect.zipRight(store.insert(session), Effect.fail("boom")))
        )
        assert.isTrue(rolledBack._tag === "Failure")
        assert.deepStrictEqual(yield* store.get(session.carrierCallId), Option.none())
      }))
  })

contract("CallSessionStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `CallSessionStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "call_sessions"
})
