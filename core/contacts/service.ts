/** Contact use cases. Every write and its events commit in one transaction (transactional outbox). */
import { Context, Effect, Either, Layer } from "effect"
import type { Principal } from "../auth/principal.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids } from "../kernel/ids.ts"
import { CursorCodec, type Page } from "../kernel/pagination.ts"
import type { E164 } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import {
  Contact,
  type ContactDetail,
  type ContactInput,
  type ContactSummary,
  type ListContactsInput,
  toDetail
} from "./model.ts"
import {
  applyInput,
  type ContactChanges,
  hasIdentity,
  indexable,
  isAdoptablePlaceholder,
  searchTerms
} from "./rules.ts"
import { ContactStore } from "./store.ts"

/**
 * The Transactor lock of a phone number in a workspace. Whoever decides which contact owns a number
 * (a create adopting a placeholder, inbound traffic creating one) or rewrites its threads holds it,
 * so two texts arriving at once from a new number make one placeholder, not two.
 */
export const phoneLock = (workspaceId: string, phone: string) => `phone:${workspaceId}:${phone}`

/**
 * Contacts a search page examines when the trigram index cannot serve its terms (rules.ts
 * `indexable`): its work stays bounded whatever the workspace holds. A page may then hold fewer
 * matches than `limit`, or none, with a `nextCursor` to go on from.
 */
export const SEARCH_SCAN = 5_000

/** The Transactor lock of one contact's row, for its read-modify-write updates. */
const contactLock = (workspaceId: string, id: string) => `contact:${workspaceId}:${id}`

/**
 * A new contact: every field not given starts at its default (model.ts). Not validated: the ids come
 * from the Ids port and the Principal, which an embedder may shape as it likes (stores check ids).
 */
const blankContact = (id: string, workspaceId: string, source: string, now: string): Contact =>
  Contact.make({ id, workspaceId, source, createdAt: now, updatedAt: now }, { disableValidation: true })

const notFound = new NotFound({ message: "No such contact" })

export const make = Effect.gen(function*() {
  const store = yield* ContactStore
  const outbox = yield* EventOutbox
  const tx = yield* Transactor
  const cursors = yield* CursorCodec
  const conversations = yield* ConversationStore

  const load = (workspaceId: string, id: string) => findOr404(id, (id) => store.get(workspaceId, id), notFound)

  const validate = (current: Pick<Contact, "phones" | "emails">, input: ContactInput) =>
    Either.match(applyInput(current, input), {
      onLeft: (message) => Effect.fail(new InvalidArgument({ message })),
      onRight: Effect.succeed
    })

  /** Phone locks in sorted order, so two transactions taking several never wait on each other in a cycle. */
  const lockPhones = (workspaceId: string, phones: ReadonlyArray<string>) =>
    Effect.forEach([...new Set(phones)].sort(), (p) => tx.lock(phoneLock(workspaceId, p)), { discard: true })

  const applyChanges = (c: Contact, changes: ContactChanges, updatedAt: string): Contact => ({
    ...c,
    ...changes,
    updatedAt
  })

  /**
   * The placeholder a create with these (already locked) phones adopts, read again under its own
   * lock: a PATCH of the placeholder holds that lock, not the phones', and its write must not be lost.
   */
  const lockedPlaceholder = (workspaceId: string, phones: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (phones.length === 0) return undefined
      const locked = new Set<string>()
      for (;;) {
        const found = (yield* store.findByPhones(workspaceId, phones)).find(isAdoptablePlaceholder)
        if (found === undefined || locked.has(found.id)) return found
        yield* tx.lock(contactLock(workspaceId, found.id))
        locked.add(found.id)
      }
    })

  const create = (principal: Principal, input: ContactInput) =>
    Effect.gen(function*() {
      if (!hasIdentity(input)) {
        return yield* new InvalidArgument({
          message: "Give at least one of firstName, lastName, company, phone, phones, email or emails"
        })
      }
      const changes = yield* validate({ phones: [], emails: [] }, input)
      const now = yield* nowIso
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          // A phone owned by a nameless auto-created contact adopts it: same id, threads keep history.
          const phones = (changes.phones ?? []).map((p) => p.value)
          yield* lockPhones(principal.workspaceId, phones)
          const placeholder = yield* lockedPlaceholder(principal.workspaceId, phones)
          let contact: Contact
          if (placeholder) {
            const merged = (changes.phones ?? []).concat(
              placeholder.phones.filter((p) => !phones.includes(p.value))
            )
            contact = { ...applyChanges(placeholder, changes, now), phones: merged, source: "manual" }
            yield* store.update(contact)
          } else {
            const { uuid } = yield* Ids
            contact = applyChanges(blankContact(uuid(), principal.workspaceId, "manual", now), changes, now)
            yield* store.insert(contact)
          }
          yield* outbox.append(principal.workspaceId, [
            event("contact.updated", { contactId: contact.id, change: "created" })
          ])
          return toDetail(contact)
        })
      )
    })

  const get = (principal: Principal, id: string): Effect.Effect<ContactDetail, NotFound> =>
    Effect.map(load(principal.workspaceId, id), toDetail)

  const update = (principal: Principal, id: string, input: ContactInput) =>
    Effect.gen(function*() {
      const now = yield* nowIso
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          // Read under the contact's lock: two PATCHes of different fields both land, and a PATCH
          // racing a DELETE answers 404 instead of reporting a write to a deleted row.
          yield* tx.lock(contactLock(principal.workspaceId, id))
          const current = yield* load(principal.workspaceId, id)
          const changes = yield* validate(current, input)
          const next = applyChanges(current, changes, now)
          yield* store.update(next)
          // `fields` lists what the caller sent (touched, not necessarily changed).
          const fields = Object.keys(input).sort()
          yield* outbox.append(principal.workspaceId, [
            event("contact.updated", { contactId: next.id, change: "updated", fields })
          ])
          return toDetail(next)
        })
      )
    })

  const remove = (principal: Principal, id: string) =>
    Effect.gen(function*() {
      const found = yield* load(principal.workspaceId, id)
      yield* tx.withTransaction(
        Effect.gen(function*() {
          // The phones' locks first (the order create takes them in), then the contact's: a text
          // arriving from its number meanwhile cannot re-attach its thread to the deleted contact,
          // and a create cannot adopt it as a placeholder mid-delete.
          yield* lockPhones(principal.workspaceId, found.phones.map((p) => p.value))
          yield* tx.lock(contactLock(principal.workspaceId, id))
          const removed = yield* store.remove(principal.workspaceId, id)
          if (!removed) return yield* notFound
          // Threads stay in the inbox under the raw number; the next text creates a fresh contact.
          yield* conversations.detachContact(principal.workspaceId, id)
          yield* outbox.append(principal.workspaceId, [event("contact.deleted", { contactId: id })])
        })
      )
      return { deleted: true as const }
    })

  const list = (principal: Principal, params: ListContactsInput) =>
    Effect.gen(function*() {
      const limit = params.limit ?? 50
      const q = params.q?.trim() ?? ""
      const terms = q.length > 0 ? searchTerms(q) : null
      // The cursor is bound to the list and its filter: replaying it with another `q` is a 400.
      const scope = `contacts:${principal.workspaceId}:${terms === null ? "" : terms.text}`
      let after: { createdAt: string; id: string } | null = null
      if (params.cursor !== undefined) {
        const [createdAt, cid] = yield* cursors.decode(scope, params.cursor)
        if (typeof createdAt !== "string" || typeof cid !== "string") {
          return yield* new InvalidArgument({ message: "cursor is invalid" })
        }
        after = { createdAt, id: cid }
      }
      const scan = terms !== null && !indexable(terms) ? SEARCH_SCAN : null
      const { examinedTo, items } = yield* store.list({ workspaceId: principal.workspaceId, terms, limit, after, scan })
      const last = items[items.length - 1]
      // A full page may have more after it (an exactly full last page yields one more, empty page);
      // a page whose window ran out resumes after the last contact it examined.
      const resume = items.length === limit && last ? last : examinedTo
      const nextCursor = resume === null || resume === undefined
        ? null
        : yield* cursors.encode(scope, [resume.createdAt, resume.id])
      const page: Page<ContactSummary> = { items, nextCursor }
      return page
    })

  /**
   * The contact a phone number belongs to, creating a placeholder (`source: inbound`, no event) for
   * an unknown number. Inbound texts and calls use this. It joins the caller's transaction when
   * there is one, so the phone's lock is held until that transaction ends.
   */
  const findOrCreatePlaceholder = (workspaceId: string, phone: E164) =>
    tx.withTransaction(Effect.gen(function*() {
      yield* tx.lock(phoneLock(workspaceId, phone))
      const existing = yield* store.findByPhones(workspaceId, [phone])
      if (existing[0]) return existing[0]
      const { uuid } = yield* Ids
      const now = yield* nowIso
      const contact: Contact = { ...blankContact(uuid(), workspaceId, "inbound", now), phones: [{ value: phone }] }
      yield* store.insert(contact)
      return contact
    }))

  return { create, get, update, remove, list, findOrCreatePlaceholder } as const
})

export class Contacts extends Context.Tag("core/Contacts")<Contacts, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Contacts, make)
