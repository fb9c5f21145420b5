/**
 * Statements a connection sends ahead of its next statement, in the same write: how a transaction's
 * BEGIN and its lock reach Postgres without a round trip of their own (transactor.ts). The Postgres
 * client implements it (adapters/postgres/PgClient.ts); the embedded database answers in-process,
 * where a round trip costs no network, and does not.
 */
import type { Connection } from "@effect/sql/SqlConnection"

/** A statement of one command, its `$n` parameters text. */
export interface LeadStatement {
  readonly text: string
  readonly values: ReadonlyArray<string>
}

export interface Leading {
  /**
   * Sends `statements` ahead of the connection's next statement. Postgres runs them in order; one
   * failing skips the rest and the statement, whose error it becomes.
   */
  readonly lead: (statements: ReadonlyArray<LeadStatement>) => void
  /** Forgets statements not sent yet: true when there were some (the server has seen none of them). */
  readonly cancel: () => boolean
}

export const LEADING: unique symbol = Symbol.for("switchboard/leading")

/**
 * The connection's Leading, if its driver client has one. @effect/sql-pg keeps a reserved
 * connection's client as `pg` (not in its types: without it, transactions send BEGIN on its own).
 */
export const leadingOf = (conn: Connection): Leading | undefined =>
  (conn as Connection & { readonly pg?: { readonly [LEADING]?: Leading } }).pg?.[LEADING]
