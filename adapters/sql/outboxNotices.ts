/**
 * Events committed by other processes on one Postgres: every outbox insert NOTIFYs OUTBOX_CHANNEL
 * (outbox.ts), and the worker's process LISTENs and wakes its fan-out at once, as a commit in its
 * own process does (OutboxSignal). A notice lost while the listening connection is down costs only
 * latency: the worker's poll still finds the events.
 */
import { Effect, Layer } from "effect"
import { OutboxSignal } from "../../core/events/signal.ts"
import { listenForever } from "./notices.ts"
import { OUTBOX_CHANNEL } from "./outbox.ts"

export const layer = Layer.scopedDiscard(
  Effect.flatMap(OutboxSignal, (signal) => listenForever(OUTBOX_CHANNEL, "outbox", () => signal.notify))
)
