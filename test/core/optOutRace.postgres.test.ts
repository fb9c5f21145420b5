/**
 * CONTRACT "Opt-outs and keywords" on a real Postgres, where transactions run at once: a STOP that
 * arrives while a send to the same number is in flight (held in the carrier) waits for that send's
 * lock, so the send commits before the opt-out; every send after the STOP is refused with the 409.
 * And a send that arrives while the STOP's answer is in flight waits for it, then is refused.
 * The waits are observed in pg_locks (an advisory lock on the phone's key not granted), not timed.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Option, Redacted, Schedule } from "effect"
import pg from "pg"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { phoneLock } from "../../core/contacts/service.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import * as Messaging from "../../core/messaging/service.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import {
  CarrierFakeTag,
  eventsOf,
  inboundText,
  messagingOver,
  register,
  registrationOf,
  workspaceWithNumber
} from "../support/optOutMessaging.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"

const url = inject("postgresUrl")

const ADA = "+14155550123"
const STOP_REPLY = "Acme: You are unsubscribed and will receive no more messages. Reply START to resubscribe."
const refusedForStop = (date: string) =>
  `${ADA} opted out of texts from this workspace on ${date} (replied STOP); they can opt back in by texting START`

/** The database's transactions waiting for the advisory lock on `key` (transactor.ts `pg_advisory_xact_lock`). */
const WAITERS = `
  SELECT count(*)::int AS n FROM pg_locks
  WHERE locktype = 'advisory' AND NOT granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`

/** The Messaging harness over a fresh Postgres database, statements on the served (untraced) path, and a URL to watch its locks from. */
const postgres = Layer.unwrapScoped(
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => freshDatabase(url ?? "", "opt_out_race")),
      (db) => Effect.promise(() => db.drop())
    )
    const watcher = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: db.url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    )
    return Layer.mergeAll(
      messagingOver(sqlStores(Postgres.layer({ url: Redacted.make(db.url) }))),
      Layer.succeed(Watcher, watcher),
      Layer.setTracerEnabled(false)
    )
  })
)

class Watcher extends Effect.Tag("test/LockWatcher")<Watcher, pg.Client>() {}

/**
 * Waits until a transaction waits for `key`'s lock ("waiting"), or until `other` ends first
 * ("finished": it did not wait). Polls pg_locks; no time limit but the test's.
 */
const waitsForLock = <A, E>(key: string, other: Fiber.Fiber<A, E>) =>
  Effect.raceFirst(
    Effect.gen(function*() {
      const client = yield* Watcher
      yield* Effect.promise(() => client.query<{ n: number }>(WAITERS, [key])).pipe(
        Effect.repeat({ until: (r) => r.rows[0]!.n > 0, schedule: Schedule.spaced("5 millis") })
      )
      return "waiting" as const
    }),
    Effect.as(Fiber.await(other), "finished" as const)
  )

/** A workspace with an approved registration whose brand is Acme. */
const acme = Effect.gen(function*() {
  const w = yield* workspaceWithNumber("Acme workspace")
  yield* register(registrationOf(w.ws, { displayName: "Acme", phone: "+12175550142" }))
  return w
})

const held = Effect.gen(function*() {
  const hold = { started: yield* Deferred.make<void>(), release: yield* Deferred.make<void>() }
  ;(yield* CarrierFakeTag).hold = hold
  return hold
})

if (url === null) {
  const needed = process.env["CI"] === "true"
  ;(needed ? describe : describe.skip)(
    `opt-out races on Postgres (no Postgres binaries and no TEST_DATABASE_URL)`,
    () => {
      it("needs a Postgres", () => {
        assert.isFalse(needed, "CI=true requires the Postgres of globalSetup")
      })
    }
  )
} else {
  layer(postgres, { excludeTestServices: true, timeout: "120 seconds" })("opt-out races on Postgres", (it) => {
    it.effect("a STOP arriving while a send is in flight waits for it: the send commits first, every later send is refused", () =>
      Effect.gen(function*() {
        const m = yield* Messaging.Messaging
        const f = yield* CarrierFakeTag
        const conversations = yield* ConversationStore
        const { live, number, ws } = yield* acme
        f.sends.length = 0

        const hold = yield* held
        const send = yield* Effect.fork(m.send(live, { to: ADA, body: "Your order shipped" }))
        yield* Deferred.await(hold.started)
        // The send is in the carrier, inside its transaction, holding the phone's lock.
        const stop = yield* Effect.fork(m.receive(inboundText(number, ADA, "STOP")))
        assert.strictEqual(yield* waitsForLock(phoneLock(ws, ADA), stop), "waiting")
        assert.isTrue(Option.isNone(yield* Fiber.poll(stop)))
        assert.isTrue(Option.isNone(yield* (yield* OptOutStore).get(ws, ADA)))

        yield* Deferred.succeed(hold.release, undefined)
        const sent = yield* Fiber.join(send)
        yield* Fiber.join(stop)

        assert.strictEqual(sent.message.deliveryStatus, "queued")
        const optOut = Option.getOrThrow(yield* (yield* OptOutStore).get(ws, ADA))
        assert.isAtLeast(Date.parse(optOut.createdAt), Date.parse(sent.message.createdAt))
        // The send was recorded before the opt-out and its answer: in that order in the outbox.
        assert.deepStrictEqual(
          (yield* eventsOf(ws)).map((e) => e.type),
          ["message.delivered", "message.received", "contact.opted_out", "message.delivered"]
        )
        assert.deepStrictEqual(f.sends.map((s) => [s.message.to, s.message.body, s.outcome]), [
          [ADA, "Your order shipped", "accepted"],
          [ADA, STOP_REPLY, "accepted"]
        ])

        const later = yield* Effect.either(m.send(live, { to: ADA, body: "Are you there?" }))
        assert.isTrue(Either.isLeft(later))
        const e = Either.getLeft(later).pipe(Option.getOrThrow)
        assert.strictEqual(e._tag, "FailedPrecondition")
        assert.strictEqual(e.message, refusedForStop(optOut.createdAt.slice(0, 10)))
        assert.lengthOf(f.sends, 2)
        assert.lengthOf(yield* conversations.listActivities(ws, sent.conversationId), 3)
      }))

    it.effect("a send arriving while the STOP's answer is in flight waits for it, then is refused; nothing reaches the carrier", () =>
      Effect.gen(function*() {
        const m = yield* Messaging.Messaging
        const f = yield* CarrierFakeTag
        const { live, number, ws } = yield* acme
        f.sends.length = 0

        const hold = yield* held
        const stop = yield* Effect.fork(m.receive(inboundText(number, ADA, "stop")))
        yield* Deferred.await(hold.started)
        // The opt-out is committed; its answer is in the carrier, under the phone's lock.
        const optOut = Option.getOrThrow(yield* (yield* OptOutStore).get(ws, ADA))
        const send = yield* Effect.fork(Effect.either(m.send(live, { to: ADA, body: "One more thing" })))
        assert.strictEqual(yield* waitsForLock(phoneLock(ws, ADA), send), "waiting")

        yield* Deferred.succeed(hold.release, undefined)
        yield* Fiber.join(stop)
        const refused = yield* Fiber.join(send)
        assert.isTrue(Either.isLeft(refused))
        const e = Either.getLeft(refused).pipe(Option.getOrThrow)
        assert.strictEqual(e._tag, "FailedPrecondition")
        assert.strictEqual(e.message, refusedForStop(optOut.createdAt.slice(0, 10)))
        assert.deepStrictEqual(f.sends.map((s) => s.message.body), [STOP_REPLY])
      }))
  })
}
