/**
 * The workspace's phone numbers (SPEC "Numbers"): list them, search the carrier's inventory, and buy
 * one through the billing gates, the payment, the carrier order and the ledger.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { numberPurchaseGate } from "../billing/gates.ts"
import { PendingCharges } from "../billing/pending.ts"
import { numberCharge } from "../billing/pricing.ts"
import { FailedPrecondition, InvalidArgument } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { normalizePhone } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
import { WorkspaceClock, workspaceNow } from "../workspaces/clock.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import {
  AvailableNumber,
  AvailableNumbersInput,
  inventoryError,
  inventoryQuery,
  NumberInventory,
  numberTaken,
  searchError
} from "./inventory.ts"
import { NumberStore, NumberType, numberTypeOf, WorkspaceNumber } from "./model.ts"

/** `POST /numbers`: the number from a search result; `type` is a hint only (the number decides). */
export const BuyNumberInput = Schema.Struct({
  phoneNumber: Schema.String.pipe(Schema.maxLength(32)),
  type: Schema.optional(NumberType)
}).annotations({ identifier: "BuyNumberInput", parseOptions: { onExcessProperty: "error" } })
export type BuyNumberInput = typeof BuyNumberInput.Type

export const BuyNumberResult = Schema.Struct({
  number: WorkspaceNumber,
  simulated: Schema.optional(Schema.Literal(true))
})
export type BuyNumberResult = typeof BuyNumberResult.Type

export const NumberList = Schema.Struct({ numbers: Schema.Array(WorkspaceNumber) })
export const AvailableNumbers = Schema.Struct({ available: Schema.Array(AvailableNumber) })

export { AvailableNumbersInput }

const make = Effect.gen(function*() {
  const numbers = yield* NumberStore
  const inventory = yield* NumberInventory
  const workspaces = yield* WorkspaceStore
  const pendingCharges = yield* PendingCharges
  const clock = yield* WorkspaceClock
  const tx = yield* Transactor

  const list = (principal: Principal) => Effect.map(numbers.list(principal.workspaceId), (all) => ({ numbers: all }))

  const available = (principal: Principal, input: AvailableNumbersInput) =>
    Effect.gen(function*() {
      const query = yield* inventoryQuery(input)
      const found = yield* inventory.search(query).pipe(Effect.mapError(searchError))
      return { available: found }
    })

  /**
   * Gates, then (live keys) the payment, the carrier order, and the number with its ledger row.
   * The gates and the price are decided under the workspace's lock, which then records a pending
   * charge (core/billing/pending.ts) and lets go: the payment and the carrier order run outside any
   * transaction, and a second transaction records the number and settles the charge. A number being
   * bought counts as held, so two purchases cannot both take the plan's included number. A step that
   * fails after the payment refunds it: a purchase leaves the number, its charge and its ledger row,
   * or none of them. Test keys pass the same gates, then only add the number (`simulated`).
   */
  const buy = (principal: Principal, input: BuyNumberInput) =>
    Effect.gen(function*() {
      const ws = principal.workspaceId
      const parsed = normalizePhone(input.phoneNumber)
      if (parsed._tag === "Left") return yield* new InvalidArgument({ message: `phoneNumber: ${parsed.left}` })
      const e164 = parsed.right
      const type = numberTypeOf(e164)
      const simulated = principal.kind === "test"
      const number: WorkspaceNumber = {
        e164,
        type,
        voiceMode: "app",
        agentId: null,
        forwardTo: null,
        assignedUserId: null,
        status: "active"
      }
      const insert = Effect.flatMap(Ids, ({ uuid }) =>
        numbers.insert(ws, number, uuid(), !simulated).pipe(
          Effect.catchAll(() => Effect.fail(inventoryError(numberTaken(e164))))
        ))
      const decided = yield* tx.withTransaction(
        Effect.gen(function*() {
          // An authenticated key's workspace exists (workspaces are never deleted).
          const workspace = Option.getOrThrowWith(
            yield* workspaces.get(ws),
            () => new Error(`workspace ${ws} of an authenticated key is missing`)
          )
          // A live key may buy the workspace's own test number (CONTRACT): ordered in place, charged as any purchase.
          const mine = Option.filter(yield* numbers.findByE164(e164), (n) => n.workspaceId === ws)
          const testNumber = Option.filter(mine, (n) => !n.ordered && !simulated)
          if (Option.isSome(mine) && Option.isNone(testNumber)) {
            return yield* new FailedPrecondition({ message: `${e164} is already one of this workspace's numbers` })
          }
          // Only numbers ordered at the carrier, or being bought, count toward the plan's included local number.
          const ordered = (yield* numbers.listActive(ws)).filter((n) => n.ordered && n.number.type === "local")
          const buying = (yield* pendingCharges.pending(ws, "number:")).filter((p) =>
            p.charges.some((c) => c.kind === "local_number")
          )
          const purchase = { e164, type, localNumbers: ordered.length + buying.length }
          yield* numberPurchaseGate(workspace.billing, purchase)
          if (simulated) {
            yield* insert
            return Option.none()
          }
          const at = new Date(yield* workspaceNow(ws))
          const pending = yield* pendingCharges.reserve(ws, {
            purpose: `number:${e164}`,
            kind: "purchase",
            charges: [numberCharge(purchase, at)],
            at: at.toISOString(),
            busy: `Buying ${e164}`
          })
          return Option.some({ workspace, pending, testNumber })
        }).pipe(Effect.provideService(WorkspaceClock, clock)),
        `numbers:${ws}`
      )
      if (Option.isNone(decided)) return { number, simulated: true as const }
      const { pending, testNumber, workspace } = decided.value
      return yield* pendingCharges.fulfil(workspace, pending, (payment) =>
        Effect.gen(function*() {
          yield* inventory.order(e164, type).pipe(Effect.mapError(inventoryError))
          return yield* tx.withTransaction(
            Effect.gen(function*() {
              if (Option.isSome(testNumber)) yield* numbers.markOrdered(ws, e164)
              else yield* insert
              yield* pendingCharges.settle(pending, payment)
              return { number: Option.match(testNumber, { onNone: () => number, onSome: (n) => n.number }) }
            }),
            `numbers:${ws}`
          )
        }))
    })

  return { list, available, buy } as const
})

export class Numbers extends Context.Tag("core/Numbers")<Numbers, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Numbers, make)
