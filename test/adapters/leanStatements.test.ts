/**
 * Lean statements and transactions (adapters/sql/leanStatements.ts, adapters/sql/transactor.ts), on
 * PGlite and Postgres: both clients take the lean path, and it costs a fraction of @effect/sql's
 * fiber steps; what it skips cannot be observed (tracing on still gives `sql.execute` and
 * `sql.transaction` spans, a statement transformer is still applied); a statement in a transaction
 * runs on the transaction's connection and one outside it never does, which on PGlite's single
 * connection means waiting for the transaction to end.
 */
import { SqlClient, Statement } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, Option, RuntimeFlags, RuntimeFlagsPatch, Supervisor, Tracer } from "effect"
import * as LeanStatements from "../../adapters/sql/leanStatements.ts"
import * as SqlTransactor from "../../adapters/sql/transactor.ts"
import * as Signal from "../../core/events/signal.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { sqlContract } from "../support/sqlContract.ts"

/** Counts the fiber steps (effects evaluated) of the fibers it supervises. */
class StepCounter extends Supervisor.AbstractSupervisor<number> {
  steps = 0
  get value() {
    return Effect.sync(() => this.steps)
  }
  override onEffect() {
    this.steps++
  }
}

/** The fiber steps `effect` takes, tracing off (as the server runs without an OTLP endpoint). */
const stepsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const counter = new StepCounter()
    yield* effect.pipe(
      Effect.supervised(counter),
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
    )
    return counter.steps
  }).pipe(Effect.withTracerEnabled(false))

/** A tracer that records the names of the spans it starts. */
const recordingTracer = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      names.push(name)
      return Effect.runSync(
        Effect.makeSpan(name, { parent: Option.getOrUndefined(parent), kind, links: [...links] }).pipe(
          Effect.withTracerEnabled(false)
        )
      )
    },
    context: (f) => f()
  })
  return { names, tracer }
}

type Services = SqlClient.SqlClient | Transactor

sqlContract<Services>({
  name: (db) => `lean statements: ${db}`,
  database: "lean",
  adapter: (client) => SqlTransactor.layer.pipe(Layer.provide(Signal.layer), Layer.provideMerge(client)),
  suite: (name, adapter) =>
    describe(name, () => {
      const setup = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS lean_items (id int PRIMARY KEY)`
        yield* sql`DELETE FROM lean_items`
        return { sql, tx: yield* Transactor }
      })

      it.effect("the client takes the lean path: a statement in under half @effect/sql's fiber steps, a transaction without its span and in fewer steps", () =>
        Effect.gen(function*() {
          const { sql, tx } = yield* setup
          assert.isTrue(LeanStatements.isRegistered(sql))
          const statement = () => sql`SELECT ${1}::int AS one`
          // A transformer sends a statement down @effect/sql's own path (see adapters/sql/leanStatements.ts).
          const stock = Statement.withTransformer((self) => Effect.succeed(self))
          const lean = yield* stepsOf(statement())
          const stockSteps = yield* stepsOf(stock(statement()))
          assert.isBelow(lean, stockSteps / 2, `lean ${lean}, stock ${stockSteps}`)
          // The transaction: @effect/sql's provides its span as the parent inside (a no-op span while
          // tracing is off); the lean one provides none, so the parent tells which one ran.
          const parent = tx.withTransaction(Effect.serviceOption(Tracer.ParentSpan), "lean-test")
          assert.isTrue(Option.isNone(yield* parent.pipe(Effect.withTracerEnabled(false))))
          const traced = yield* parent.pipe(Effect.withTracerEnabled(true))
          assert.strictEqual(
            Option.isSome(traced) && traced.value._tag === "Span" ? traced.value.name : undefined,
            "sql.transaction"
          )
          const leanTx = yield* stepsOf(tx.withTransaction(Effect.void, "lean-test"))
          const stockTx = yield* stepsOf(
            tx.withTransaction(Effect.void, "lean-test").pipe(Effect.withTracerEnabled(true))
          )
          assert.isBelow(leanTx, stockTx, `lean ${leanTx}, stock ${stockTx}`)
        }).pipe(Effect.provide(adapter)))

      it.effect("rows and errors come back as @effect/sql's path gives them", () =>
        Effect.gen(function*() {
          const { sql } = yield* setup
          yield* sql`INSERT INTO lean_items ${sql.insert([{ id: 1 }, { id: 2 }])}`
          assert.deepStrictEqual(yield* sql<{ id: number }>`SELECT id FROM lean_items ORDER BY id`, [{ id: 1 }, {
            id: 2
          }])
          const failed = yield* Effect.either(sql`SELECT * FROM no_such_table`)
          assert.isTrue(Either.isLeft(failed) && failed.left._tag === "SqlError")
        }).pipe(Effect.provide(adapter)))

      it.effect("a transaction's statements run on its connection: a failure rolls every one back", () =>
        Effect.gen(function*() {
          const { sql, tx } = yield* setup
          const failed = yield* Effect.either(
            tx.withTransaction(
              Effect.gen(function*() {
                yield* sql`INSERT INTO lean_items (id) VALUES (10)`
                yield* sql`INSERT INTO lean_items (id) VALUES (11)`
                return yield* Effect.fail("stop" as const)
              }),
              "lean-rollback"
            )
          )
          assert.deepStrictEqual(failed, Either.left("stop"))
          assert.deepStrictEqual(yield* sql`SELECT id FROM lean_items`, [])
          yield* tx.withTransaction(sql`INSERT INTO lean_items (id) VALUES (12)`)
          assert.deepStrictEqual(yield* sql`SELECT id FROM lean_items`, [{ id: 12 }])
        }).pipe(Effect.provide(adapter)))

      it.live("a statement outside a transaction never runs inside another fiber's open transaction", () =>
        Effect.gen(function*() {
          const { sql, tx } = yield* setup
          const inserted = yield* Effect.makeLatch(false)
          const holder = yield* Effect.fork(
            Effect.either(
              tx.withTransaction(
                Effect.gen(function*() {
                  yield* sql`INSERT INTO lean_items (id) VALUES (20)`
                  yield* inserted.open
                  yield* Effect.sleep("150 millis")
                  return yield* Effect.fail("rolled back" as const)
                })
              )
            )
          )
          yield* inserted.await
          // On Postgres another connection answers at once; on PGlite's one connection it waits
          // for the rollback. Either way the uncommitted row is never seen.
          assert.deepStrictEqual(yield* sql`SELECT id FROM lean_items`, [])
          assert.deepStrictEqual(yield* Fiber.join(holder), Either.left("rolled back" as const))
        }).pipe(Effect.provide(adapter)))

      it.effect("with tracing on, statements and transactions still give their spans", () =>
        Effect.gen(function*() {
          const { sql, tx } = yield* setup
          const { names, tracer } = recordingTracer()
          yield* tx.withTransaction(sql`SELECT 1`, "lean-traced").pipe(
            Effect.withTracer(tracer),
            Effect.withTracerEnabled(true)
          )
          assert.includeMembers(names, ["sql.transaction", "sql.execute"])
        }).pipe(Effect.provide(adapter)))

      it.effect("a statement transformer is still applied", () =>
        Effect.gen(function*() {
          const { sql } = yield* setup
          let seen = 0
          const rows = yield* sql<{ n: number }>`SELECT ${1}::int AS n`.pipe(
            Statement.withTransformer((self, sql) => Effect.sync(() => (seen++, sql`SELECT ${2}::int AS n`)))
          )
          assert.strictEqual(seen, 1)
          assert.deepStrictEqual(rows, [{ n: 2 }])
        }).pipe(Effect.provide(adapter)))
    })
})
