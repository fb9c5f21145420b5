/** SessionStore on SQL: `sign_in_links` and `member_sessions`, by digest. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { SessionStore } from "../../core/members/sessions.ts"
import { memberSessions, signInLinks } from "./tables.ts"

const linkColumns = signInLinks.columns()
const sessionColumns = memberSessions.columns()

export const layer = Layer.effect(
  SessionStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    SessionStore.of({
      insertLink: (link) => Effect.orDie(sql`INSERT INTO sign_in_links ${sql.insert(signInLinks.row(link))}`),
      countLinksSince: (email, since) =>
        Effect.orDie(
          sql<
            { n: number }
          >`SELECT count(*)::int AS n FROM sign_in_links WHERE email = ${email} AND created_at >= ${since}`
        ).pipe(Effect.map((rs) => Number(rs[0]?.n ?? 0))),
      redeemLink: (hash, at) =>
        Effect.orDie(
          sql`UPDATE sign_in_links SET used_at = ${at}
              WHERE hash = ${hash} AND used_at IS NULL AND expires_at > ${at}
              RETURNING ${sql.literal(linkColumns)}`
        ).pipe(Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), signInLinks.decode))),
      insertSession: (s) => Effect.orDie(sql`INSERT INTO member_sessions ${sql.insert(memberSessions.row(s))}`),
      findSession: (hash) =>
        Effect.orDie(sql`SELECT ${sql.literal(sessionColumns)} FROM member_sessions WHERE hash = ${hash}`).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), memberSessions.decode))
        ),
      touchSession: (hash, at) =>
        Effect.asVoid(Effect.orDie(sql`UPDATE member_sessions SET last_used_at = ${at} WHERE hash = ${hash}`)),
      setSessionMember: (hash, memberId) =>
        Effect.asVoid(Effect.orDie(sql`UPDATE member_sessions SET member_id = ${memberId} WHERE hash = ${hash}`)),
      removeSession: (hash) =>
        Effect.orDie(sql`DELETE FROM member_sessions WHERE hash = ${hash} RETURNING hash`).pipe(
          Effect.map((rs) => rs.length === 1)
        )
    }))
)
