/**
 * Server secrets (cursor signing, media URLs), kept in `settings`: made once per database so every
 * process agrees, and sealed like webhook secrets (secrets.ts), so a dump of the database alone
 * cannot forge a cursor or a media URL. The boot (secrets.ts) makes the missing ones, seals those
 * an earlier version stored in the clear, seals them again on a change of key, and opens them.
 */
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer } from "effect"
import { CursorCodec, makeCursorCodec } from "../../core/kernel/pagination.ts"
import type { Fresh, Sealer } from "./secrets.ts"

/** Each server secret and its row in `settings`. A new one is one line here. */
const ROWS = {
  cursor: "cursor_secret",
  media: "media_secret"
} as const

export type ServerSecretName = keyof typeof ROWS

/** Every server secret, opened at boot: 32 bytes each. */
export class ServerSecrets
  extends Context.Tag("adapters/sql/ServerSecrets")<ServerSecrets, Readonly<Record<ServerSecretName, Uint8Array>>>()
{}

/** The cursor codec keyed by the database's cursor secret. */
export const CursorCodecLive = Layer.effect(
  CursorCodec,
  Effect.flatMap(ServerSecrets, (s) => makeCursorCodec(s.cursor))
)

const names = Object.values(ROWS)

/** What a sealed server secret is bound to: copied onto another row, it does not open. */
const context = (row: string) => `settings:${row}`

/** As versions before sealing stored them (and as a sealed one opens): the 32 bytes in hex. */
const isPlain = (value: string) => /^[0-9a-f]{64}$/.test(value)

const rows = (sql: SqlClient.SqlClient) =>
  sql<{ name: string; value: string }>`SELECT name, value FROM settings WHERE name IN ${sql.in(names)}`

/** Makes the missing ones (a new database, or a name added since), sealed with `seal`. */
export const create = (sql: SqlClient.SqlClient, seal: Sealer["seal"]) =>
  Effect.forEach(
    names,
    (row) => {
      const fresh = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join(
        ""
      )
      return sql`INSERT INTO settings (name, value) VALUES (${row}, ${
        seal(fresh, context(row))
      }) ON CONFLICT (name) DO NOTHING`
    },
    { discard: true }
  )

/** One sealed server secret, for a boot to check its key against. */
export const sample = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ name: string; value: string }>`SELECT name, value FROM settings WHERE name IN ${
      sql.in(names)
    } AND value LIKE 'v1.%' LIMIT 1`,
    (rows) => rows.map((r) => ({ sealed: r.value, context: context(r.name) }))
  )

/**
 * Writes each one back as `fresh` gives it (plain ones sealed, ones under the old key sealed
 * again), only if unchanged since read: another process booting at once keeps its write.
 */
export const reseal = (sql: SqlClient.SqlClient, fresh: Fresh) =>
  Effect.gen(function*() {
    for (const r of yield* rows(sql)) {
      const value = fresh(r.value, context(r.name), isPlain)
      if (
        value !== r.value
      ) yield* sql`UPDATE settings SET value = ${value} WHERE name = ${r.name} AND value = ${r.value}`
    }
  })

/** Opens them all; one that does not open stops the boot, since the server cannot run without it. */
export const open = (sql: SqlClient.SqlClient, sealer: Sealer) =>
  Effect.gen(function*() {
    const stored = new Map((yield* rows(sql)).map((r) => [r.name, r.value]))
    const opened: Partial<Record<ServerSecretName, Uint8Array>> = {}
    for (const [secret, row] of Object.entries(ROWS) as Array<[ServerSecretName, string]>) {
      const plain = Either.try(() => sealer.open(stored.get(row) ?? "", context(row)))
      if (Either.isLeft(plain) || !isPlain(plain.right)) {
        return yield* Effect.dieMessage(
          `the server secret ${row} in settings does not open with SECRETS_KEY (or SECRETS_KEY_PREVIOUS)`
        )
      }
      opened[secret] = Uint8Array.from(plain.right.match(/../g)!, (h) => parseInt(h, 16))
    }
    return opened as Record<ServerSecretName, Uint8Array>
  })
