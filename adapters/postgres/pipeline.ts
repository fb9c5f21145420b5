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
 * caller's LIMIT) and a read takes no row lock, so none waits on another transaction's rows; a
 * write could (an upsert on a row another transaction holds). A read can still wait for a table
 * lock (DDL, a migration): the pipelined connections give up such a wait after LOCK_WAIT_MS, and the
 * read (with any read of the same text behind it, whose Parse it was) is sent again through the
 * pool, where it waits without holding up the reads behind it. A
 * connection with PIPELINE_DEPTH statements in flight takes no more; they go to the pool.
 *
 * The connections are opened when the client is made. One that is not up yet, or was lost, sends
 * its statements through the pool meanwhile (the pool's own `fallback`); a lost one, or one that
 * failed to open, is opened again a second later; what it had in flight fails like a statement on
 * a lost pool connection (SqlError).
 */
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { setImmediate, setTimeout } from "node:timers"
import type * as Pg from "pg"
import { PREPARED } from "../sql/prepared.ts"

/** A marked statement that only reads: `SELECT`, no `FOR UPDATE`/`FOR SHARE`. */
const READ = /^\s*SELECT\b/i
const LOCKING = /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE|KEY\s+SHARE)\b/i
export const pipelinable = (text: string): boolean =>
  text.startsWith(PREPARED) && READ.test(text.slice(PREPARED.length)) && !LOCKING.test(text)

/**
 * `pipelinable`, judged once per marked text (marked texts are few: prepared.ts keeps at most
 * MAX_PREPARED); an unmarked text is refused by its first characters and never kept.
 */
const pipelinableOnce = () => {
  const verdicts = new Map<string, boolean>()
  return (text: string): boolean => {
    if (!text.startsWith(PREPARED)) return false
    let verdict = verdicts.get(text)
    if (verdict === undefined) verdicts.set(text, verdict = pipelinable(text))
    return verdict
  }
}

/** Pipelined connections per process: Postgres runs each one's statements in turn on one backend. */
export const PIPELINES = 2
/** Their `application_name`, as pg_stat_activity shows them (the pool's is `@effect/sql-pg`). */
export const PIPELINE_NAME = "@effect/sql-pg pipeline"
const RECONNECT_MS = 1000
/** How long a pipelined read may wait for a lock before it goes to the pool instead (lock_timeout). */
export const LOCK_WAIT_MS = 200
/** Statements one pipelined connection holds in flight at most; past it, the pool. */
export const PIPELINE_DEPTH = 256
/**
 * Errors after which a pipelined read is sent again through the pool, since it did not run: a lock
 * wait given up (lock_timeout), and a named statement whose Parse, sent ahead of it in the same
 * pipeline, failed (so its Bind finds no statement), as when that Parse gave up a lock wait.
 */
const RETRY_ON_POOL: ReadonlySet<string> = new Set(["55P03", "26000"])

interface Slot {
  client: Pg.Client | undefined
  up: boolean
  inFlight: number
  corked: boolean
}

type Rows = ReadonlyArray<any>

/** The settings pipelined connections are opened with, beside the pool's. */
export const pipelineSettings = {
  application_name: PIPELINE_NAME,
  pipeline: true,
  lock_timeout: LOCK_WAIT_MS,
  connectionTimeoutMillis: 5_000,
  keepAlive: true
} as const

/** pg's socket under a client (to cork it, and to drop it). */
const socketOf = (client: Pg.Client) =>
  (client as unknown as {
    connection: { stream: NodeJS.WritableStream & { cork(): void; uncork(): void; destroy(): void } }
  }).connection.stream

export const pipelined = (
  open: () => Pg.Client,
  fallback: Pick<Connection, "execute">,
  size = PIPELINES
): { readonly connection: Pick<Connection, "execute">; readonly close: () => Promise<void> } => {
  const slots: Array<Slot> = Array.from(
    { length: size },
    () => ({ client: undefined, up: false, inFlight: 0, corked: false })
  )
  const marked = pipelinableOnce()
  let closed = false

  /** Opens the slot's connection: at once, and again a second after it is lost or fails to open. */
  const connect = (slot: Slot) => {
    if (closed) return
    const client = open()
    slot.client = client
    const lost = () => {
      if (slot.client !== client) return
      slot.client = undefined
      slot.up = false
      slot.inFlight = 0
      slot.corked = false
      socketOf(client).destroy()
      setTimeout(() => connect(slot), RECONNECT_MS).unref()
    }
    client.on("error", lost)
    client.on("end", lost)
    client.connect((error: Error | undefined) => {
      if (error !== null && error !== undefined) return lost()
      if (slot.client === client) slot.up = true
    })
  }

  for (const slot of slots) connect(slot)

  /** The live connection with the fewest statements in flight, below PIPELINE_DEPTH, or undefined (then the pool). */
  const pick = (): Slot | undefined => {
    let best: Slot | undefined
    for (const slot of slots) {
      if (slot.up && slot.inFlight < PIPELINE_DEPTH && (best === undefined || slot.inFlight < best.inFlight)) {
        best = slot
      }
    }
    return best
  }

  /** Sends `sql` on the slot's connection; "retry" when it did not run there (RETRY_ON_POOL). */
  const send = (slot: Slot, client: Pg.Client, sql: string, params: ReadonlyArray<unknown>) =>
    Effect.async<Rows, SqlError | "retry">((resume) => {
      // One write for every statement of this turn: corked until the loop's check phase.
      if (!slot.corked) {
        const stream = socketOf(client)
        slot.corked = true
        stream.cork()
        setImmediate(() => {
          if (slot.client === client) slot.corked = false
          stream.uncork()
        })
      }
      slot.inFlight++
      client.query(
        sql,
        params as Array<unknown>,
        (error: (Error & { code?: string }) | null, result: Pg.QueryResult | undefined) => {
          if (slot.client === client) slot.inFlight--
          if (error?.code !== undefined && RETRY_ON_POOL.has(error.code)) resume(Effect.fail("retry"))
          else if (error) resume(Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })))
          else resume(Effect.succeed(result?.rows ?? []))
        }
      )
    })

  const execute = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: ((rows: Rows) => Rows) | undefined
  ): Effect.Effect<Rows, SqlError> => {
    const pooled = () => fallback.execute(sql, params, transformRows as never)
    if (!marked(sql)) return pooled()
    return Effect.suspend(() => {
      const slot = closed ? undefined : pick()
      const client = slot?.client
      if (slot === undefined || client === undefined) return pooled()
      const rows = Effect.catchIf(send(slot, client, sql, params), (e): e is "retry" => e === "retry", pooled)
      return transformRows === undefined ? rows : Effect.map(rows, transformRows)
    })
  }

  /** Ends the connections; one still waiting for an answer after a second is dropped. */
  const close = async () => {
    closed = true
    await Promise.all(
      slots.map(async (slot) => {
        const client = slot.client
        slot.client = undefined
        slot.up = false
        if (client === undefined) return
        const ended = await Promise.race([
          client.end().then(() => true, () => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000).unref())
        ])
        if (!ended) socketOf(client).destroy()
      })
    )
  }
  return { connection: { execute: execute as Connection["execute"] }, close }
}
