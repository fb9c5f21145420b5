import { Context, Effect, Option } from "effect"
import type { Contact, ContactSummary } from "./model.ts"
import type { SearchTerms } from "./rules.ts"

export interface ContactListQuery {
  readonly workspaceId: string
  readonly terms: SearchTerms | null
  readonly limit: number
  /** Keyset position of the last row already seen: newest created first, id breaking ties. */
  readonly after: Position | null
  /** With terms: the most contacts the page examines (newest first, after `after`), or null for no bound. */
  readonly scan: number | null
}

export interface Position {
  readonly createdAt: string
  readonly id: string
}

export interface ContactPage {
  readonly items: ReadonlyArray<ContactSummary>
  /**
   * Set when the page examined its whole `scan` window without filling up: the last contact examined,
   * where the next page resumes (more contacts may match beyond it).
   */
  readonly examinedTo: Position | null
}

/** Every method is scoped to one workspace: tenant isolation is part of the port. */
export interface ContactStore {
  readonly insert: (contact: Contact) => Effect.Effect<void>
  readonly get: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Contact>>
  readonly update: (contact: Contact) => Effect.Effect<void>
  readonly remove: (workspaceId: string, id: string) => Effect.Effect<boolean>
  /**
   * A broadcast's audience: the contacts among `ids` or carrying any of `tags`, oldest first, at
   * most `limit`, each with its first phone (null when it has none). Reads nothing else of them.
   */
  readonly audience: (
    workspaceId: string,
    ids: ReadonlyArray<string>,
    tags: ReadonlyArray<string>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly phone: string | null }>>
  /** Contacts holding any of these E.164 numbers, oldest first. */
  readonly findByPhones: (workspaceId: string, phones: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Contact>>
  /**
   * A page of summaries: what a list answers and no more. A contact's notes, properties and other
   * phones may hold a megabyte each; a list never reads them, so its cost follows its answer.
   */
  readonly list: (query: ContactListQuery) => Effect.Effect<ContactPage>
}

export const ContactStore = Context.GenericTag<ContactStore>("core/ContactStore")
