/**
 * LISTEN that ends when its connection does. @effect/sql-pg's `listen` (0.53) shares one
 * connection among every channel and swallows that connection's error: after a database restart or
 * a failover its streams stay open and silent for good, and nothing listens again. Here each
 * stream holds a connection of its own and fails when it is lost, so the caller's retry
 * (adapters/sql/notices.ts) listens again on a new one, and catches up on what it missed.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Stream } from "effect"
import * as Pg from "pg"

export const listenOwn = (pool: Pg.Pool) => (channel: string): Stream.Stream<string, SqlError> =>
  Stream.asyncPush<string, SqlError>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          // Keepalive: a server that vanished without closing the socket (a host down) is noticed too.
          const client = new Pg.Client({ ...pool.options, keepAlive: true } as Pg.ClientConfig)
          const lost = (cause: unknown) =>
            void emit.fail(new SqlError({ cause, message: `Lost the connection listening on ${channel}` }))
          client.on("error", lost)
          client.on("end", () => lost(new Error("Connection ended")))
          client.on("notification", (message) => {
            if (message.channel === channel && message.payload !== undefined) emit.single(message.payload)
          })
          try {
            await client.connect()
            await client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
          } catch (error) {
            await client.end().catch(() => undefined)
            throw error
          }
          return client
        },
        catch: (cause) => new SqlError({ cause, message: `Failed to listen on ${channel}` })
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          return client.end().catch(() => undefined)
        }).pipe(Effect.timeoutOption(1000))
    )
  )
