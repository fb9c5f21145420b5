/**
 * Postgres notices for the life of the scope (LISTEN on its own connection): each notice on
 * `channel` runs `onNotice`; `onListen` runs before each (re)connect, for what a notice missed while
 * the connection was down could have said. A failed connection is logged and listened to again.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Schedule, Stream } from "effect"

const relisten = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

export const listenForever = (
  channel: string,
  what: string,
  onNotice: (payload: string) => Effect.Effect<void>,
  onListen: Effect.Effect<void> = Effect.void
) =>
  Effect.flatMap(PgClient.PgClient, (pg) =>
    Effect.forkScoped(
      Effect.retry(
        Effect.zipRight(onListen, Stream.runForEach(pg.listen(channel), onNotice)).pipe(
          Effect.tapErrorCause((cause) => Effect.logWarning(`${what} notices lost; listening again`, cause))
        ),
        relisten
      )
    ))
