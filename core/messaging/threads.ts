/**
 * Thread resolution: the thread of (workspace number, participant), created on first contact, the
 * contact it belongs to, and what a message sets on it. Inbound traffic from an unknown number
 * creates a placeholder contact; an outbound message attaches the thread to an existing contact of
 * that number, if any, and creates none. Withheld callers share one thread per number with no
 * contact (`WITHHELD`). Callers hold the participant's phone lock.
 */
import { Effect, Option } from "effect"
import { Contacts } from "../contacts/service.ts"
import { ContactStore } from "../contacts/store.ts"
import { type ActivityRecord, type Thread, WITHHELD } from "../conversations/model.ts"
import { ConversationStore, type ThreadTouch } from "../conversations/store.ts"
import { Ids } from "../kernel/ids.ts"
import type { E164 } from "../kernel/phone.ts"

/** The other party of a thread: a phone number, or withheld callers (inbound calls only). */
export type Participant = E164 | typeof WITHHELD

/** One side of a conversation: a workspace number and the outside participant. */
export interface Line {
  readonly workspaceId: string
  readonly numberE164: string
  readonly participant: Participant
  /** The number's inbox: a new thread carries it. */
  readonly inboxId: string
}

/** A message on a thread: when, and its preview. */
export interface Message {
  readonly at: string
  readonly preview: string | null
}

/** What a message sets on a thread, given the thread as it is. */
type Touch = (thread: Thread) => ThreadTouch

/** An outbound message means the team has seen the thread. */
const outboundTouch = (message: Message): Touch => () => ({
  lastActivityAt: message.at,
  preview: message.preview,
  unread: 0
})

/** New inbound traffic reopens a done thread and counts as unread. */
const inboundTouch = (message: Message): Touch => (thread) => ({
  status: "open",
  lastActivityAt: message.at,
  preview: message.preview,
  unread: thread.unread + 1
})

/** The thread a line's first message creates, before the message is recorded on it. */
const newThread = (line: Line, id: string, at: string, contactId: string | null): Thread => ({
  id,
  workspaceId: line.workspaceId,
  inboxId: line.inboxId,
  numberE164: line.numberE164,
  participant: line.participant,
  contactId,
  status: "open",
  assigneeUid: null,
  lastActivityAt: at,
  preview: null,
  unread: 0,
  createdAt: at
})

export const makeThreads = Effect.gen(function*() {
  const store = yield* ConversationStore
  const contacts = yield* Contacts
  const contactStore = yield* ContactStore

  /**
   * Records a message on a stored thread. `contactId` runs only when the thread has no contact
   * (the number had none, or it was deleted): the thread is attached to the one it now belongs to.
   */
  const touch = (thread: Thread, touchOf: Touch, contactId: Effect.Effect<string | null>) =>
    Effect.gen(function*() {
      const attach = thread.contactId === null ? yield* contactId : null
      const touched: ThreadTouch = attach === null ? touchOf(thread) : { ...touchOf(thread), contactId: attach }
      yield* store.touchThread(thread.workspaceId, thread.id, touched)
      return { ...thread, ...touched }
    })

  /** The thread of `line` with the message recorded on it; a new thread is inserted already carrying it. */
  const record = (line: Line, now: string, touchOf: Touch, contactId: Effect.Effect<string | null>) =>
    Effect.gen(function*() {
      const existing = yield* store.findThread(line.workspaceId, line.numberE164, line.participant)
      if (Option.isSome(existing)) return yield* touch(existing.value, touchOf, contactId)
      const fresh = newThread(line, (yield* Ids).uuid(), now, yield* contactId)
      const stored = yield* store.insertThread({ ...fresh, ...touchOf(fresh) })
      // Another writer's thread for the same line comes back instead of ours: record the message on it.
      return stored.id === fresh.id ? stored : yield* touch(stored, touchOf, contactId)
    })

  /** The participant's existing contact, if any. */
  const contactOf = (workspaceId: string, participant: string) =>
    Effect.map(contactStore.findByPhones(workspaceId, [participant]), (found) => found[0]?.id ?? null)

  return {
    /** An outbound message to `line`: the thread is attached to the participant's contact, if one exists. */
    outbound: (line: Line, message: Message) =>
      record(line, message.at, outboundTouch(message), contactOf(line.workspaceId, line.participant)),
    /**
     * A sent message on `line` and its activity, stored in one step (ConversationStore.recordOutbound):
     * the thread is created or touched and attached to the participant's contact, if one exists; only
     * the message's columns are written to an existing thread, so what changed on it meanwhile survives.
     */
    sent: (line: Line, message: Message, activity: ActivityRecord) =>
      Effect.flatMap(Ids, ({ uuid }) => {
        const fresh = newThread(line, uuid(), message.at, null)
        return store.recordOutbound({ ...fresh, ...outboundTouch(message)(fresh) }, activity)
      }),
    /**
     * An inbound message on `line`: the participant's contact, a new placeholder for an unknown
     * number; none for withheld callers (no phone to own).
     */
    inbound: (line: Line, message: Message) => {
      const { participant } = line
      return participant === WITHHELD
        ? record(line, message.at, inboundTouch(message), Effect.succeed(null))
        : Effect.flatMap(
          contacts.findOrCreatePlaceholder(line.workspaceId, participant),
          (contact) => record(line, message.at, inboundTouch(message), Effect.succeed(contact.id))
        )
    }
  } as const
})

export type Threads = Effect.Effect.Success<typeof makeThreads>
