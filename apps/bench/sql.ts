/**
 * The statements @effect/sql compiles for ContactStore.get / ContactStore.list in
 * adapters/sql/stores.ts (sql.and wraps several conditions in parentheses), as plain `pg` queries.
 * Used by the baseline server and by the EXPLAIN step of the benchmark. Keep in step with stores.ts.
 */
import type pg from "pg"
import { likeContains } from "../../adapters/sql/rows.ts"
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

/** First page (no cursor) of `GET /v1/api/contacts?q=&limit=`; `q` is trimmed as the service does. */
export const listStatement = (workspaceId: string, q: string, limit: number): Statement => {
  const trimmed = q.trim()
  const terms = trimmed.length > 0 ? searchTerms(trimmed) : null
  if (terms === null) {
    return {
      text: "SELECT * FROM contacts WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
      values: [workspaceId, limit]
    }
  }
  if (terms.digits === null) {
    return {
      text:
        "SELECT * FROM contacts WHERE (workspace_id = $1 AND search_text LIKE $2) ORDER BY created_at DESC, id DESC LIMIT $3",
      values: [workspaceId, likeContains(terms.text), limit]
    }
  }
  return {
    text:
      "SELECT * FROM contacts WHERE (workspace_id = $1 AND (search_text LIKE $2 OR search_digits LIKE $3)) ORDER BY created_at DESC, id DESC LIMIT $4",
    values: [workspaceId, likeContains(terms.text), likeContains(terms.digits), limit]
  }
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
