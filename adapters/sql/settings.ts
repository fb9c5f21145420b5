/** Server-wide settings kept in the database, so every process sharing it agrees. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A server secret (cursor signing, media URLs), made once per database so every process agrees. */
export const serverSecret = (name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fresh = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")
    yield* sql`INSERT INTO settings (name, value) VALUES (${name}, ${fresh}) ON CONFLICT (name) DO NOTHING`
    const rows = yield* sql<{ value: string }>`SELECT value FROM settings WHERE name = ${name}`
    return Uint8Array.from(rows[0]!.value.match(/../g)!, (h) => parseInt(h, 16))
  }).pipe(Effect.orDie)

export const cursorSecret = serverSecret("cursor_secret")
