/**
 * Thread resolution: the thread of (workspace number, participant), created on first contact, and
 * the contact it belongs to. Inbound traffic from an unknown number creates a placeholder contact;
 * an outbound message attaches the thread to an existing contact of that number, if any, and
 * creates none. Callers hold the participant's phone lock: the thread row is read, then rewritten.
 */
import { Effect, Option } from "effect"
import { Contacts } from "../contacts/service.ts"
import { ContactStore } from "../contacts/store.ts"
import type { Thread } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { InvalidArgument } from "../errors.ts"
import { Ids } from "../ids.ts"
import { type E164, normalizePhone } from "../phone.ts"

/** A phone number given by a caller or a carrier; the error names its field. */
export const phoneField = (field: string, raw: string) =>
  Effect.mapError(normalizePhone(raw), (why) => new InvalidArgument({ message: `${field}: ${why}` }))

/** One side of a conversation: a workspace number and the outside participant. */
export interface Line {
  readonly workspaceId: string
  readonly numberE164: string
  readonly participant: E164
  /** The number's inbox, read only when the thread is new. */
  readonly inboxId: Effect.Effect<string>
}

export const makeThreads = Effect.gen(function* () {
  const store = yield* ConversationStore
  const contacts = yield* Contacts
  const contactStore = yield* ContactStore

  /** `contactId` runs only for a new thread, or one whose contact was deleted. */
  const resolve = (line: Line, now: string, contactId: Effect.Effect<string | null>) =>
    Effect.gen(function* () {
      const existing = yield* store.findThread(line.workspaceId, line.numberE164, line.participant)
      if (Option.isSome(existing)) {
        // A thread whose contact was deleted is re-attached to the contact the number now belongs to.
        return existing.value.contactId === null ? { ...existing.value, contactId: yield* contactId } : existing.value
      }
      const { uuid } = yield* Ids
      const thread: Thread = {
        id: uuid(),
        workspaceId: line.workspaceId,
        inboxId: yield* line.inboxId,
        numberE164: line.numberE164,
        participant: line.participant,
        contactId: yield* contactId,
        status: "open",
        assigneeUid: null,
        lastActivityAt: now,
        preview: null,
        unread: 0,
        createdAt: now
      }
      return yield* store.insertThread(thread)
    })

  return {
    /** Attaches the thread to the participant's contact, if one exists. */
    outbound: (line: Line, now: string) =>
      resolve(
        line,
        now,
        Effect.map(contactStore.findByPhones(line.workspaceId, [line.participant]), (found) => found[0]?.id ?? null)
      ),
    /** The participant's contact, a new placeholder for an unknown number. */
    inbound: (line: Line, now: string) =>
      Effect.flatMap(contacts.findOrCreatePlaceholder(line.workspaceId, line.participant), (contact) =>
        resolve(line, now, Effect.succeed(contact.id))
      )
  } as const
})

export type Threads = Effect.Effect.Success<typeof makeThreads>
