/**
 * Events committed by other processes on one Postgres: every outbox insert NOTIFYs OUTBOX_CHANNEL
 * (outbox.ts), and the worker's process LISTENs and wakes its fan-out at once, as a commit in its
 * own process does (OutboxSignal). A notice lost while the listening connection is down costs only
 * latency: the worker's poll still finds the events.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Schedule, Stream } from "effect"
import { OutboxSignal } from "../../core/events/signal.ts"
import { OUTBOX_CHANNEL } from "./outbox.ts"

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const pg = yield* PgClient.PgClient
    const signal = yield* OutboxSignal
    const listen = Stream.runForEach(pg.listen(OUTBOX_CHANNEL), () => signal.notify).pipe(
      Effect.tapErrorCause((cause) => Effect.logWarning("outbox notices lost; listening again", cause))
    )
    const retry = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))
    yield* Effect.forkScoped(Effect.retry(listen, retry))
  })
)
