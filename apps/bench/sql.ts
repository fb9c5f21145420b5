/**
 * The statements @effect/sql compiles for ContactStore.get / ContactStore.list in
 * adapters/sql/stores.ts (sql.and wraps several conditions in parentheses), as plain `pg` queries.
 * Used by the baseline server and by the EXPLAIN step of the benchmark. Keep in step with stores.ts.
 */
import type pg from "pg"
import { CONTACT_WINDOWS } from "../../adapters/sql/contacts.ts"
import { likeContains } from "../../adapters/sql/rows.ts"
import { windowsFrom } from "../../adapters/sql/searchWindows.ts"
import { searchTerms } from "../../core/contacts/rules.ts"

export interface Statement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

/** `EXPLAIN (options) <statement>`, one line of the plan per element. */
export const explain = async (
  db: Pick<pg.Client, "query">,
  st: Statement,
  options = "ANALYZE, BUFFERS"
): Promise<Array<string>> =>
  (await db.query<{ "QUERY PLAN": string }>(`EXPLAIN (${options}) ${st.text}`, [...st.values])).rows.map((r) =>
    r["QUERY PLAN"]
  )

export const getStatement = (workspaceId: string, id: string): Statement => ({
  text: "SELECT * FROM contacts WHERE workspace_id = $1 AND id = $2",
  values: [workspaceId, id]
})

const CONTACT_COLUMNS = "id, first_name, last_name, company, phones->0->>'value' AS phone, created_at"

/** The newest contact's time, where a search by words begins its windows (searchWindows.ts). */
export const newestContactStatement = (workspaceId: string): Statement => ({
  text: "SELECT created_at FROM contacts WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
  values: [workspaceId]
})

/**
 * First page (no cursor) of `GET /v1/api/contacts?q=&limit=`; `q` is trimmed as the service does.
 * A search by words reads the newest buckets first, from `newest` (the newest contact's time); with
 * no contacts it runs no statement (null), as the store.
 */
export const listStatement = (
  workspaceId: string,
  q: string,
  limit: number,
  newest: Date | string | null
): Statement | null => {
  const trimmed = q.trim()
  const terms = trimmed.length > 0 ? searchTerms(trimmed) : null
  const newestFirst = (where: string) =>
    `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`
  if (terms === null) return { text: newestFirst("workspace_id = $1"), values: [workspaceId, limit] }
  if (terms.digits !== null) {
    return {
      text: newestFirst("(workspace_id = $1 AND (search_text LIKE $3 OR search_digits LIKE $4))"),
      values: [workspaceId, limit, likeContains(terms.text), likeContains(terms.digits)]
    }
  }
  if (newest === null) return null
  const values: Array<unknown> = [workspaceId, limit, likeContains(terms.text)]
  const param = (v: unknown) => `$${values.push(v)}`
  const { olderThan, windows } = windowsFrom(newest, CONTACT_WINDOWS)
  const branches = [
    ...windows.map((buckets) =>
      newestFirst(
        `(workspace_id = $1 AND search_text LIKE $3 AND search_bucket(created_at) IN (${
          buckets.map(param).join(", ")
        }))`
      )
    ),
    newestFirst(`(workspace_id = $1 AND search_text LIKE $3 AND created_at < ${param(olderThan)})`)
  ]
  return { text: `${branches.map((b) => `(${b})`).join(" UNION ALL ")} LIMIT $2`, values }
}

/** The contact search's statements as the store runs them: the newest contact's time, then the page. */
export const contactSearch = async (
  run: (statement: Statement) => Promise<ReadonlyArray<Record<string, unknown>>>,
  workspaceId: string,
  q: string,
  limit: number
): Promise<Statement | null> => {
  const trimmed = q.trim()
  if (trimmed.length === 0 || searchTerms(trimmed).digits !== null) return listStatement(workspaceId, q, limit, null)
  const [newest] = await run(newestContactStatement(workspaceId))
  return listStatement(workspaceId, q, limit, (newest?.["created_at"] as Date | undefined) ?? null)
}

/** The scope string the service binds its cursors to. */
export const cursorScope = (workspaceId: string, q: string) => {
  const trimmed = q.trim()
  return `contacts:${workspaceId}:${trimmed.length > 0 ? searchTerms(trimmed).text : ""}`
}

/** What people type into a contacts search box: name fragments, full names, companies, emails, phones. */
export const SEARCH_TERMS = [
  // name fragments and names
  "mar",
  "john",
  "smit",
  "garc",
  "jenn",
  "rodr",
  "nguyen",
  "patel",
  "kowal",
  "o'brien",
  "müller",
  "chlo",
  "tanaka",
  "sven",
  "okafor",
  "haddad",
  "siobhan",
  "dmitri",
  "leila",
  "van der",
  // full names
  "maria garcia",
  "james smith",
  "wei chen",
  "priya patel",
  "john lee",
  // company words
  "acme",
  "dental",
  "logistics",
  "plumbing",
  "northwind",
  "law group",
  "coffee",
  "redwood realty",
  "café",
  "tidewater",
  // email fragments
  "gmail",
  "@outlook",
  "proton.me",
  "james.smith",
  "msmith",
  "garcia_",
  "hotmail.com",
  "fastmail",
  // phone fragments (4-7 digits, as typed)
  "4155",
  "21255",
  "(617) 4",
  "415-55",
  "3105550",
  "+44 20 7",
  "8675309",
  "9175"
]
