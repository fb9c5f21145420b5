/**
 * Hot reads pipelined: the statements marked PREPARED (adapters/sql/prepared.ts) that only read
 * (a `SELECT` without a locking clause), run outside a transaction, go to a few connections in
 * pg's pipeline mode instead of checking a pool connection out each. The statements issued in one
 * turn of the event loop leave in one write per connection, Postgres reads them in one read, and no
 * pool checkout or release runs: on a busy server most of a point read's system calls and wake-ups
 * are shared with its neighbours.
 *
 * Why only those: a pipelined statement waits for every statement sent before it on its
 * connection. A marked statement has a plan that does not depend on its parameters (no search, no
 * caller's LIMIT) and a read takes no row lock, so none waits on another transaction; a write
 * could (an upsert on a row another transaction holds), and would hold up the reads behind it.
 *
 * A connection that is not up yet, or was lost, sends its statements through the pool meanwhile
 * (the pool's own `fallback`); a lost one is opened again a second later (and at most once a
 * second); what it had in flight fails like a statement on a lost pool connection (SqlError).
 */
import { SqlError } from "@effect/sql/SqlError"
import type { Connection } from "@effect/sql/SqlConnection"
import { setImmediate, setTimeout } from "node:timers"
import { Effect } from "effect"
import type * as Pg from "pg"
import { PREPARED } from "../sql/prepared.ts"

/** A marked statement that only reads: `SELECT`, no `FOR UPDATE`/`FOR SHARE`. */
const READ = /^\s*SELECT\b/i
const LOCKING = /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE|KEY\s+SHARE)\b/i
export const pipelinable = (text: string): boolean =>
  text.startsWith(PREPARED) && READ.test(text.slice(PREPARED.length)) && !LOCKING.test(text)

/** Pipelined connections per process: Postgres runs each one's statements in turn on one backend. */
export const PIPELINES = 2
/** Their `application_name`, as pg_stat_activity shows them (the pool's is `@effect/sql-pg`). */
export const PIPELINE_NAME = "@effect/sql-pg pipeline"
const RECONNECT_MS = 1000

interface Slot {
  client: Pg.Client | undefined
  up: boolean
  inFlight: number
  corked: boolean
  lastAttempt: number
}

type Rows = ReadonlyArray<any>

export const pipelined = (
  open: () => Pg.Client,
  fallback: Pick<Connection, "execute">,
  size = PIPELINES
): { readonly connection: Pick<Connection, "execute">; readonly close: () => Promise<void> } => {
  const slots: Array<Slot> = Array.from({ length: size }, () => ({ client: undefined, up: false, inFlight: 0, corked: false, lastAttempt: 0 }))
  let closed = false

  const connect = (slot: Slot) => {
    const now = Date.now()
    if (closed || slot.client !== undefined || now - slot.lastAttempt < RECONNECT_MS) return
    slot.lastAttempt = now
    const client = open()
    slot.client = client
    const lost = () => {
      if (slot.client !== client) return
      slot.client = undefined
      slot.up = false
      slot.inFlight = 0
      slot.corked = false
      // Opened again on its own, so the pipeline comes back without waiting for a statement to ask.
      setTimeout(() => connect(slot), RECONNECT_MS).unref()
    }
    client.on("error", lost)
    client.on("end", lost)
    client.connect((error: Error | undefined) => {
      if (error !== null && error !== undefined) return lost()
      if (slot.client === client) slot.up = true
    })
  }

  /** The live connection with the fewest statements in flight, or undefined (then the pool). */
  const pick = (): Slot | undefined => {
    let best: Slot | undefined
    for (const slot of slots) {
      if (!slot.up) connect(slot)
      else if (best === undefined || slot.inFlight < best.inFlight) best = slot
    }
    return best
  }

  const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: ((rows: Rows) => Rows) | undefined) => {
    if (closed || !pipelinable(sql)) return fallback.execute(sql, params, transformRows as never)
    const slot = pick()
    if (slot === undefined) return fallback.execute(sql, params, transformRows as never)
    return Effect.async<Rows, SqlError>((resume) => {
      const client = slot.client!
      // One write for every statement of this turn: corked until the loop's check phase.
      if (!slot.corked) {
        const stream = (client as unknown as { connection: { stream: NodeJS.WritableStream & { cork(): void; uncork(): void } } }).connection.stream
        slot.corked = true
        stream.cork()
        setImmediate(() => {
          if (slot.client === client) slot.corked = false
          stream.uncork()
        })
      }
      slot.inFlight++
      client.query(sql, params as Array<unknown>, (error: Error | null, result: Pg.QueryResult | undefined) => {
        if (slot.client === client) slot.inFlight--
        if (error) resume(Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })))
        else {
          const rows = result?.rows ?? []
          resume(Effect.succeed(transformRows === undefined ? rows : transformRows(rows)))
        }
      })
    })
  }

  const close = async () => {
    closed = true
    await Promise.all(slots.map((slot) => {
      const client = slot.client
      slot.client = undefined
      slot.up = false
      return client === undefined ? undefined : client.end().catch(() => {})
    }))
  }
  return { connection: { execute: execute as Connection["execute"] }, close }
}
