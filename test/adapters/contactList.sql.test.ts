/**
 * A contact list reads what it answers (the summary columns), never the notes, properties or other
 * phones it leaves out, so its cost follows the answer whatever those hold. Shown on PGlite by
 * giving a contact a `notes` value no Contact decodes: a list that read whole rows would fail.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Contact } from "../../core/contacts/model.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { freshPglite } from "../support/pglite.ts"
import { sqlStores } from "../support/sqlStores.ts"

const WS = "00000000-0000-7000-8000-0000000000aa"
const at = "2026-01-01T00:00:00.000Z"

describe("ContactStore.list on SQL", () => {
  it("reads only the summary columns", async () => {
    const program = Effect.gen(function*() {
      const store = yield* ContactStore
      const sql = yield* SqlClient.SqlClient
      const ada = Contact.make({
        id: "00000000-0000-7000-8000-0000000000a1",
        workspaceId: WS,
        firstName: "Ada",
        lastName: null,
        company: null,
        phones: [{ value: "+14155550100" }, { value: "+14155550101" }],
        source: "manual",
        createdAt: at,
        updatedAt: at
      })
      yield* store.insert(ada)
      // What a list must not read: a value no Contact decodes.
      yield* sql`UPDATE contacts SET notes = '"not a list of notes"'::jsonb, properties = '[1]'::jsonb WHERE id = ${ada.id}`
      const { items: listed } = yield* store.list({ workspaceId: WS, terms: null, limit: 10, after: null, scan: null })
      expect(listed).toEqual([{
        id: ada.id,
        firstName: "Ada",
        lastName: null,
        company: null,
        phone: "+14155550100",
        createdAt: at
      }])
      // The full record is still read whole where it is answered (and here fails to decode).
      expect((yield* Effect.exit(store.get(WS, ada.id)))._tag).toBe("Failure")
    })
    await program.pipe(
      Effect.provide(sqlStores(freshPglite("migrated")) as Layer.Layer<ContactStore | SqlClient.SqlClient, unknown>),
      Effect.runPromise
    )
  }, 60_000)
})
