/**
 * The contract of the carrier call session store, run unchanged against memory, PGlite and a real
 * Postgres: a session reads back exactly (route jsonb, nulls, timestamps), a second insert of the
 * same call is refused and changes nothing (a repeated webhook), put replaces, a dialed call is
 * found by our id and renamed once, and a rolled-back transaction leaves no session.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { type CallSession, CallSessionStore, dialingId } from "../../core/calls/sessions.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = CallSessionStore | WorkspaceStore | Transactor

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Calls",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
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
  memberUid: null,
  ringLegs: null,
  agentId: null,
  job: null,
  activityId: null,
  reservedActivityId: null,
  conversationId: null,
  recordingRefused: false,
  voicemailStep: null,
  pendingRecording: null,
  voicemailTranscript: null,
  conversationEnded: false,
  insightsGenerated: false,
  ...patch
})

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a session reads back exactly; a second insert of the call is refused and changes nothing; put replaces", () =>
      Effect.gen(function*() {
        const store = yield* CallSessionStore
        const ws = yield* newWorkspace
        const session = sessionOf(ws)
        assert.isNull(Option.getOrNull(yield* store.get(session.carrierCallId)))
        assert.isTrue(yield* store.insert(session))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(session.carrierCallId)), session)

        assert.isFalse(yield* store.insert({ ...session, numberE164: "+13125550111", route: { kind: "app" } }))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(session.carrierCallId)), session)

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
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(session.carrierCallId)), ended)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(outbound.carrierCallId)), outbound)

        // The assistant's conversation finds its call; another conversation finds none.
        const conversationId = `conv-${uuid()}`
        assert.isNull(Option.getOrNull(yield* store.findByConversation(conversationId)))
        const named = {
          ...ended,
          conversationId,
          recordingRefused: true,
          conversationEnded: true,
          insightsGenerated: true
        }
        yield* store.put(named)
        assert.deepStrictEqual(Option.getOrNull(yield* store.findByConversation(conversationId)), named)
        assert.isNull(Option.getOrNull(yield* store.findByConversation(`conv-${uuid()}`)))

        // An app call rings the team: its legs, then the teammate who took it.
        const ringing = sessionOf(ws, {
          route: { kind: "app" },
          ringLegs: [
            { memberUid: uuid(), phone: "+15555550101", callControlId: null, ended: false },
            { memberUid: uuid(), phone: "+15555550102", callControlId: "v3:leg-2", ended: true }
          ]
        })
        assert.isTrue(yield* store.insert(ringing))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ringing.carrierCallId)), ringing)
        const taken = { ...ringing, answeredAt: ts(7), answeredBy: "member" as const, memberUid: uuid() }
        yield* store.put(taken)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ringing.carrierCallId)), taken)
      }))

    it.effect("a dialed call is found by our call id, renamed once to the carrier's ids (control id kept when none), and removed", () =>
      Effect.gen(function*() {
        const store = yield* CallSessionStore
        const ws = yield* newWorkspace
        const callId = uuid()
        const dialing = sessionOf(ws, {
          carrierCallId: dialingId(callId),
          callControlId: dialingId(callId),
          direction: "outbound",
          route: null,
          reservedActivityId: callId
        })
        assert.isNull(Option.getOrNull(yield* store.findByCallId(callId)))
        assert.isTrue(yield* store.insert(dialing))
        assert.deepStrictEqual(Option.getOrNull(yield* store.findByCallId(callId)), dialing)
        assert.isNull(Option.getOrNull(yield* store.findByCallId(uuid())))

        const carrierCallId = `v3:${uuid()}`
        const renamed = { ...dialing, carrierCallId, callControlId: "v3:ctl-real" }
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.rename(dialing.carrierCallId, carrierCallId, "v3:ctl-real")),
          renamed
        )
        assert.isNull(Option.getOrNull(yield* store.get(dialing.carrierCallId)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(carrierCallId)), renamed)
        assert.deepStrictEqual(Option.getOrNull(yield* store.findByCallId(callId)), renamed)
        // A second rename (the dial's answer after a webhook named the call) finds nothing to rename.
        assert.isNull(Option.getOrNull(yield* store.rename(dialing.carrierCallId, `v3:${uuid()}`, null)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(carrierCallId)), renamed)

        const other = uuid()
        const kept = sessionOf(ws, {
          carrierCallId: dialingId(other),
          callControlId: "ctl-kept",
          reservedActivityId: other
        })
        assert.isTrue(yield* store.insert(kept))
        const again = `v3:${uuid()}`
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.rename(kept.carrierCallId, again, null)),
          { ...kept, carrierCallId: again }
        )
        yield* store.remove(again)
        assert.isNull(Option.getOrNull(yield* store.get(again)))
        assert.isNull(Option.getOrNull(yield* store.findByCallId(other)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(carrierCallId)), renamed)
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
        assert.isNull(Option.getOrNull(yield* store.get(session.carrierCallId)))
      }))
  })

contract("CallSessionStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `CallSessionStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "call_sessions"
})
