/**
 * Sends what falls due: each claimed send waits for its recipient's quiet hours to end and for its
 * workspace's pace, then goes through the path `POST /messages` takes (messaging/outbound.ts
 * `sendWith`: gates, opt-outs, test or live by the key that asked), and is settled with the message
 * it made or the refusal it met.
 *
 * At most once per recipient: a live send is marked `sending`, committed, before it is handed to
 * `sendWith`, and settled in the transaction that records the message. A process that dies between
 * the two leaves the mark, which the sweep turns into `failed` with `unknown_outcome`, never
 * sending it again. A test key's send calls no carrier: its check, record and settlement are one
 * transaction.
 */
import { Array as Arr, Clock, Context, Duration, Effect, Either, Layer, Option } from "effect"
import type { Principal } from "../auth/principal.ts"
import { EventOutbox } from "../events/outbox.ts"
import { type DomainError, errorStatus } from "../kernel/errors.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor, Urgent } from "../kernel/transactor.ts"
import type { SendHooks } from "../messaging/outbound.ts"
import { Messaging } from "../messaging/service.ts"
import { OptOuts } from "../optouts/service.ts"
import { Pacer } from "../pacing/pacer.ts"
import { nextAllowed, recipientTimeZone } from "../pacing/quietHours.ts"
import { type Failure, OPTED_OUT, UNKNOWN_OUTCOME } from "./model.ts"
import { completedEvent } from "./service.ts"
import { type ClaimedSend, type Completed, SchedulingStore, type Settlement } from "./store.ts"

/** How long a claim holds its sends: beyond the pace horizon and a send. */
export const LEASE_MS = 30_000
/** How far ahead a workspace's pace may be booked; sends beyond it wait in the queue. */
export const PACE_HORIZON_MS = 2_000
/**
 * How long a send may stay `sending` before the sweep gives it up as `unknown_outcome`, by default
 * (SCHEDULING_IN_FLIGHT_MS): beyond any carrier call (the Telnyx client's own timeout is shorter).
 */
export const IN_FLIGHT_MS = 60_000

export const make = Effect.gen(function*() {
  const store = yield* SchedulingStore
  const pacer = yield* Pacer
  const messaging = yield* Messaging
  const optOuts = yield* OptOuts
  const tx = yield* Transactor
  const outbox = yield* EventOutbox
  const completion = (c: Completed) => outbox.append(c.workspaceId, [completedEvent(c)])

  /** Settles a send and, when it ended its broadcast, adds `broadcast.completed`: in the caller's transaction. */
  const settle = (c: ClaimedSend, outcome: Settlement) =>
    Effect.gen(function*() {
      const { completed, settled } = yield* store.settle(
        c.send.workspaceId,
        c.send.id,
        c.claimId,
        outcome,
        yield* nowIso
      )
      if (Option.isSome(completed)) yield* completion(completed.value)
      return settled
    })

  const settleAlone = (c: ClaimedSend, outcome: Settlement) =>
    Effect.locally(tx.withTransaction(settle(c, outcome)), Urgent, true)

  const failureOf = (e: DomainError): Failure => ({ code: errorStatus[e._tag].code, message: e.message })

  /**
   * Gives a claimed send its time to leave: the workspace's next free slot in its pace. Otherwise
   * `later`: handed back to wait for its recipient's quiet hours to end (or, after a defect, left
   * to its lease); or `paced`, for the caller to hand back: the pace is booked beyond the horizon.
   */
  const book = (c: ClaimedSend): Effect.Effect<number | "later" | "paced"> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const local = now + c.clockOffsetMs
      const allowed = nextAllowed(local, recipientTimeZone(c.send.to, c.timeZone), c.quietHours)
      if (allowed > local) {
        yield* store.release(c.send.workspaceId, c.claimId, [c.send.id], new Date(allowed).toISOString())
        return "later" as const
      }
      const start = yield* pacer.reserve(c.send.workspaceId, c.send.segments, c.segmentsPerMinute, now, PACE_HORIZON_MS)
      return Option.isSome(start) ? start.value : "paced" as const
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError("A scheduled send could not be booked", cause).pipe(Effect.as("later" as const))
      )
    )

  /** Sends a booked send at its time, a live one marked in flight for `inFlightMs`; answers whether it was settled. */
  const send = (c: ClaimedSend, start: number, inFlightMs: number) =>
    Effect.gen(function*() {
      const ws = c.send.workspaceId
      const now = yield* Clock.currentTimeMillis
      if (start > now) yield* Effect.sleep(Duration.millis(start - now))

      // A broadcast skips a recipient who opted out; a scheduled message fails with the refusal, as POST /messages would.
      if (c.send.source === "broadcast") {
        const check = yield* Effect.either(optOuts.ensureCanText(ws, c.send.to))
        if (Either.isLeft(check)) {
          return yield* settleAlone(c, {
            state: "skipped",
            messageId: null,
            failure: { code: OPTED_OUT, message: check.left.message }
          })
        }
      }

      const principal: Principal = {
        workspaceId: ws,
        keyId: c.keyId,
        kind: c.live ? "live" : "test",
        scopes: new Set(["messages:send"])
      }
      // A live send is marked in flight, committed, before anything can reach the carrier: a process
      // that dies from here on leaves it to the sweep, never to be sent again. (The mark cannot wait
      // for the carrier call itself: on Postgres that runs inside the transaction holding the
      // recipient's lock, which a crash rolls back.)
      if (c.live) {
        const until = (yield* Clock.currentTimeMillis) + inFlightMs
        if (
          !(yield* Effect.locally(store.markSending(c.send.workspaceId, c.send.id, c.claimId, until), Urgent, true))
        ) return false
      }
      const hooks: SendHooks = {
        inRecord: (message) => settle(c, { state: "sent", messageId: message.id, failure: null })
      }
      const sent = yield* Effect.either(messaging.sendWith(principal, {
        ...(c.conversationId === null ? { to: c.send.to } : { conversationId: c.conversationId }),
        ...(c.from === null ? {} : { from: c.from }),
        body: c.body,
        ...(c.mediaUrls.length === 0 ? {} : { mediaUrls: c.mediaUrls })
      }, hooks))
      if (Either.isRight(sent)) return true
      if (sent.left._tag === "Superseded") return false
      // The carrier failed in a way that may have sent the text (a timeout).
      const failure = c.live && sent.left._tag === "Internal"
        ? { code: UNKNOWN_OUTCOME, message: sent.left.message }
        : failureOf(sent.left)
      return yield* settleAlone(c, { state: "failed", messageId: null, failure })
    }).pipe(
      // A defect leaves the send to its lease (pending: claimed again) or to the sweep (sending).
      Effect.catchAllCause((cause) =>
        Effect.logError("A scheduled send failed unexpectedly", cause).pipe(Effect.as(false))
      )
    )

  /**
   * Claims up to `limit` due sends and books each its time, and gives each send booked, as soon as it
   * is, to `run`, which runs it apart (its effect answers true once the send is settled): the next
   * claim must not wait for this one's slowest send, or a pace faster than a send's round trip would
   * lose that wait at every claim. Sends the pace had no room for go back, a workspace's in one
   * statement. A live send is marked in flight for `inFlightMs`. Answers how many it claimed, and how
   * many went back to wait for the pace.
   */
  const round = (
    limit: number,
    run: (sending: Effect.Effect<boolean>) => Effect.Effect<void>,
    inFlightMs = IN_FLIGHT_MS
  ) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* store.claimDue(now, LEASE_MS, PACE_HORIZON_MS, limit)
      const booked = yield* Effect.forEach(
        claimed,
        (c) =>
          Effect.tap(book(c), (start) => (typeof start === "number" ? run(send(c, start, inFlightMs)) : Effect.void)),
        { concurrency: "unbounded" }
      )
      const paced = claimed.filter((_, i) => booked[i] === "paced")
      const byWorkspace = Arr.groupBy(paced, (c) => c.send.workspaceId)
      yield* Effect.forEach(
        Object.entries(byWorkspace),
        ([ws, sends]) =>
          store.release(ws, sends[0].claimId, sends.map((c) => c.send.id), null).pipe(
            // Left to their lease, to be claimed again.
            Effect.catchAllCause((cause) => Effect.logError("Scheduled sends could not be handed back", cause))
          ),
        { discard: true }
      )
      return { claimed: claimed.length, paced: paced.length }
    })

  /** Gives up sends whose in-flight mark ran out (every one, with `all`), with `broadcast.completed` for broadcasts it ends. */
  const sweep = (all: boolean) =>
    tx.withTransaction(Effect.gen(function*() {
      const completed = yield* store.sweep(yield* Clock.currentTimeMillis, yield* nowIso, all)
      yield* Effect.forEach(completed, completion, { discard: true })
      return completed.length
    }))

  return { round, sweep, nextDue: store.nextDue } as const
})

export class SchedulingEngine extends Context.Tag("core/SchedulingEngine")<
  SchedulingEngine,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(SchedulingEngine, make)
