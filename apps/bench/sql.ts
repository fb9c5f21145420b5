/**
 * The statements @effect/sql compiles for ContactStore.get / ContactStore.list in
 * adapters/sql/stores.ts (sql.and wraps several conditions in parentheses), as plain `pg` queries.
 * Used by the baseline server and by the EXPLAIN step of the benchmark. Keep in step with stores.ts.
 */
import { likeContains } from "../../adapters/sql/rows.ts"
import { searchTerms } from "../../core/contacts/rules.ts"

export interface Statement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

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
      text: "SELECT * FROM contacts WHERE (workspace_id = $1 AND search_text LIKE $2) ORDER BY created_at DESC, id DESC LIMIT $3",
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
