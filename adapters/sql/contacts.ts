/** ContactStore on SQL, with the search columns (trigram-indexed) kept beside each contact. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { Contact } from "../../core/contacts/model.ts"
import { searchDigits, searchText } from "../../core/contacts/rules.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { PREPARED } from "./prepared.ts"
import { likeContains } from "./rows.ts"
import { contacts, contactSummaries } from "./tables.ts"

/** A contact's columns, with what search reads. */
const columnsOf = (c: Contact): Record<string, unknown> => ({
  ...contacts.row(c),
  search_text: searchText(c),
  search_digits: searchDigits(c)
})

/** A contact's columns, named (a prepared statement's). */
const contactColumns = contacts.columns()

export const layer = Layer.effect(
  ContactStore,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const die = Effect.orDie
    const all = Effect.map((rs: ReadonlyArray<unknown>) => rs.map(contacts.decode))
    return ContactStore.of({
      insert: (c) => die(sql`INSERT INTO contacts ${sql.insert(columnsOf(c))}`),
      get: (workspaceId, id) =>
        die(
          sql`${sql.literal(PREPARED)} SELECT ${
            sql.literal(contactColumns)
          } FROM contacts WHERE workspace_id = ${workspaceId} AND id = ${id}`
        ).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(contacts.decode)))
        ),
      update: (c) =>
        die(sql`UPDATE contacts SET ${sql.update(columnsOf(c), ["workspace_id", "id", "created_at"])}
          WHERE workspace_id = ${c.workspaceId} AND id = ${c.id}`),
      remove: (workspaceId, id) =>
        die(sql`DELETE FROM contacts WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`).pipe(
          Effect.map((rs) => rs.length > 0)
        ),
      audience: (workspaceId, ids, tags, limit) =>
        ids.length === 0 && tags.length === 0
          ? Effect.succeed([])
          : die(sql<{ id: string; phone: string | null }>`
              SELECT id, phones->0->>'value' AS phone FROM contacts WHERE workspace_id = ${workspaceId} AND (${
            sql.or([
              ...(ids.length === 0 ? [] : [sql.in("id", ids)]),
              ...(tags.length === 0 ? [] : [
                sql`EXISTS (SELECT 1 FROM jsonb_array_elements_text(tags) t WHERE ${sql.in("t", tags)})`
              ])
            ])
          }) ORDER BY created_at, id LIMIT ${limit}`),
      findByPhones: (workspaceId, phones) =>
        phones.length === 0
          ? Effect.succeed([])
          : die(sql`
              SELECT * FROM contacts WHERE workspace_id = ${workspaceId}
              AND ${sql.or(phones.map((p) => sql`phones @> ${JSON.stringify([{ value: p }])}::jsonb`))}
              ORDER BY created_at, id`).pipe(all),
      list: ({ after, limit, scan, terms, workspaceId }) => {
        const following = [sql`workspace_id = ${workspaceId}`]
        if (after !== null) {
          following.push(sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`)
        }
        const match = terms === null
          ? null
          : terms.digits === null
          ? sql`search_text LIKE ${likeContains(terms.text)}`
          : sql`(search_text LIKE ${likeContains(terms.text)} OR search_digits LIKE ${likeContains(terms.digits)})`
        if (match === null || scan === null) {
          // One statement; Postgres picks the plan from the term's estimated frequency (statistics
          // 1000, migration 0003): a common term walks contacts_recent newest first and stops at
          // `limit`, a rare one takes the trigram index and sorts its few matches.
          return die(sql`
            SELECT id, first_name, last_name, company, phones->0->>'value' AS phone, created_at
            FROM contacts WHERE ${sql.and(match === null ? following : [...following, match])}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(
            Effect.map((rs) => ({ items: rs.map(contactSummaries.decode), examinedTo: null }))
          )
        }
        // No index for the terms: examine at most `scan` contacts newest first, and say where the
        // window ended when it was full (the `edge` row, last), so the next page resumes there.
        return die(sql`
          WITH examined AS MATERIALIZED (
            SELECT id, first_name, last_name, company, phones->0->>'value' AS phone, created_at, search_text, search_digits
            FROM contacts WHERE ${sql.and(following)}
            ORDER BY created_at DESC, id DESC LIMIT ${scan}
          )
          (SELECT id, first_name, last_name, company, phone, created_at, false AS edge FROM examined
            WHERE ${match} ORDER BY created_at DESC, id DESC LIMIT ${limit})
          UNION ALL
          (SELECT id, NULL, NULL, NULL, NULL, created_at, true FROM examined
            WHERE (SELECT count(*) FROM examined) = ${scan} ORDER BY created_at, id LIMIT 1)`).pipe(
          Effect.map((rs) => {
            const edge = rs.find((r) => r["edge"] === true)
            const items = rs.filter((r) => r["edge"] !== true).map(contactSummaries.decode)
            if (edge === undefined) return { items, examinedTo: null }
            const { createdAt, id } = contactSummaries.decode(edge)
            return { items, examinedTo: { createdAt, id } }
          })
        )
      }
    })
  })
)
