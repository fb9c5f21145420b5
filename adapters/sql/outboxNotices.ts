/**
 * Events committed by other processes on one Postgres: every outbox insert NOTIFYs OUTBOX_CHANNEL
 * (outbox.ts), and the worker's process LISTENs and wakes its fan-out at once, as a commit in its
 * own process does (OutboxSignal). A notice lost while the listening connection is down costs only
 * latency: the worker looks when it listens again, and its poll finds the events anyway.
 */
import { Effect, Layer } from "effect"
import { OutboxSignal } from "../../core/events/signal.ts"
import { listenForever } from "./notices.ts"
import { OUTBOX_CHANNEL } from "./outbox.ts"

export const layer = Layer.scopedDiscard(
  Effect.flatMap(
    OutboxSignal,
    // Each (re)connect wakes the fan-out too: events committed while no connection listened sent their notices to nobody.
    (signal) => listenForever(OUTBOX_CHANNEL, "outbox", () => signal.notify, signal.notify)
  )
)
