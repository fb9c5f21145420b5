/**
 * The opt-out list's use cases (CONTRACT "Opt-outs and keywords"): what every send path checks,
 * what a keyword or the carrier records, and the API's list, record and remove. Each change and its
 * event (`contact.opted_out`, `contact.opted_in`) commit together, holding the phone's key
 * (`Transactor.exclusive` of contacts/service.ts `phoneLock`), which a send holds from its check to
 * its record (messaging/outbound.ts `transmit`): a send commits before an opt-out or is refused after it.
 */
import { Context, Effect, Layer, Option } from "effect"
import { AuditLog } from "../audit/store.ts"
import { actorOf, type Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { ContactStore } from "../contacts/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { FailedPrecondition, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { CursorCodec, type Page } from "../kernel/pagination.ts"
import { phoneField } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import {
  type CreateOptOutInput,
  type ListOptOutsInput,
  optedOutMessage,
  type OptOut,
  type OptOutRecord,
  type OptOutSource
} from "./model.ts"
import { OptOutStore } from "./store.ts"

const view = ({ workspaceId: _, ...o }: OptOutRecord): OptOut => o

export const make = Effect.gen(function*() {
  const store = yield* OptOutStore
  const contacts = yield* ContactStore
  const outbox = yield* EventOutbox
  const audit = yield* AuditLog
  const tx = yield* Transactor
  const cursors = yield* CursorCodec

  const contactIdOf = (workspaceId: string, phone: string) =>
    Effect.map(contacts.findByPhones(workspaceId, [phone]), (found) => found[0]?.id ?? null)

  /**
   * Refuses a text to an opted-out phone (409, CONTRACT's wording). Run it holding the phone's key,
   * so an opt-out cannot commit between it and the send.
   */
  const ensureCanText = (workspaceId: string, phone: string) =>
    Effect.flatMap(
      store.get(workspaceId, phone),
      Option.match({
        onNone: () => Effect.void,
        onSome: (o) => Effect.fail(new FailedPrecondition({ message: optedOutMessage(o) }))
      })
    )

  /**
   * Records that `phone` opted out, with `contact.opted_out`, in the caller's transaction (run
   * holding the phone's key); the opt-out already there when there is one.
   */
  const optOut = (
    workspaceId: string,
    phone: string,
    how: { readonly source: OptOutSource; readonly keyword: string | null; readonly note: string | null }
  ) =>
    Effect.gen(function*() {
      const record: OptOutRecord = { workspaceId, phone, ...how, createdAt: yield* nowIso }
      if (!(yield* store.insert(record))) {
        return { optOut: Option.getOrElse(yield* store.get(workspaceId, phone), () => record), created: false }
      }
      yield* outbox.append(workspaceId, [
        event("contact.opted_out", {
          phone,
          contactId: yield* contactIdOf(workspaceId, phone),
          source: how.source,
          keyword: how.keyword
        })
      ])
      return { optOut: record, created: true }
    })

  /** Removes `phone`'s opt-out, with `contact.opted_in` and an audit entry, in the caller's transaction; false when there was none. */
  const optIn = (
    workspaceId: string,
    phone: string,
    how: { readonly source: OptOutSource; readonly keyword: string | null; readonly actor: string }
  ) =>
    Effect.gen(function*() {
      const removed = yield* store.get(workspaceId, phone)
      if (Option.isNone(removed) || !(yield* store.remove(workspaceId, phone))) return false
      yield* outbox.append(workspaceId, [
        event("contact.opted_in", {
          phone,
          contactId: yield* contactIdOf(workspaceId, phone),
          source: how.source,
          keyword: how.keyword
        })
      ])
      yield* audit.append(workspaceId, {
        actor: how.actor,
        action: "opt_out.removed",
        detail: { phone, keyword: how.keyword, optedOut: view(removed.value) }
      })
      return true
    })

  /** `GET /opt-outs`: newest first, or the one of `phone`. */
  const list = (p: Principal, input: ListOptOutsInput) =>
    Effect.gen(function*() {
      const phone = input.phone === undefined ? null : yield* phoneField("phone", input.phone)
      const limit = input.limit ?? 50
      const scope = `opt-outs:${p.workspaceId}:${phone ?? ""}`
      let after: { createdAt: string; phone: string } | null = null
      if (input.cursor !== undefined) {
        const [createdAt, last] = yield* cursors.decode(scope, input.cursor)
        if (typeof createdAt !== "string" || typeof last !== "string") {
          return yield* new InvalidArgument({ message: "cursor is invalid" })
        }
        after = { createdAt, phone: last }
      }
      const items = yield* store.list({ workspaceId: p.workspaceId, phone, limit, after })
      const last = items[items.length - 1]
      const page: Page<OptOut> = {
        items: items.map(view),
        nextCursor: items.length === limit && last !== undefined
          ? yield* cursors.encode(scope, [last.createdAt, last.phone])
          : null
      }
      return page
    })

  /** `POST /opt-outs`: a revocation received another way (a call, an email); the existing opt-out when there is one. */
  const create = (p: Principal, input: CreateOptOutInput) =>
    Effect.gen(function*() {
      const phone = yield* phoneField("phone", input.phone)
      const { created, optOut: o } = yield* tx.exclusive(phoneLock(p.workspaceId, phone))(
        tx.withTransaction(optOut(p.workspaceId, phone, { source: "api", keyword: null, note: input.note ?? null }))
      )
      return { optOut: view(o), created }
    })

  /** `DELETE /opt-outs/{phone}`: only an opt-out recorded through the API; the recipient's own is theirs to undo. */
  const remove = (p: Principal, rawPhone: string) =>
    Effect.gen(function*() {
      const phone = yield* phoneField("phone", rawPhone)
      return yield* tx.exclusive(phoneLock(p.workspaceId, phone))(tx.withTransaction(
        Effect.gen(function*() {
          const found = yield* store.get(p.workspaceId, phone)
          if (Option.isNone(found)) {
            return yield* new NotFound({ message: `${phone} has not opted out of texts from this workspace` })
          }
          if (found.value.source !== "api") {
            return yield* new FailedPrecondition({ message: "Only the recipient can opt back in, by texting START" })
          }
          yield* optIn(p.workspaceId, phone, { source: "api", keyword: null, actor: actorOf(p) })
          return { deleted: true as const }
        })
      ))
    })

  return { ensureCanText, optOut, optIn, list, create, remove } as const
})

export class OptOuts extends Context.Tag("core/OptOuts")<OptOuts, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(OptOuts, make)
