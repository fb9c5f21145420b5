/**
 * The workspace's phone numbers (SPEC "Numbers"): list them, search the carrier's inventory, and buy
 * one through the billing gates, the payment, the carrier order and the ledger.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { numberPurchaseGate } from "../billing/gates.ts"
import { asPrecondition, type Payment, Payments } from "../billing/payments.ts"
import { numberCharge } from "../billing/pricing.ts"
import { LedgerStore } from "../billing/store.ts"
import { FailedPrecondition, InvalidArgument } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { normalizePhone } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
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
  const payments = yield* Payments
  const ledger = yield* LedgerStore
  const tx = yield* Transactor

  const list = (principal: Principal) => Effect.map(numbers.list(principal.workspaceId), (all) => ({ numbers: all }))

  const available = (principal: Principal, input: AvailableNumbersInput) =>
    Effect.gen(function*() {
      const query = yield* inventoryQuery(input)
      const found = yield* inventory.search(query).pipe(Effect.mapError(searchError))
      return { available: found }
    })

  /**
   * Gates, then (live keys) the payment, the carrier order, and the number with its ledger row in
   * one transaction. Under a per-workspace lock, so two purchases cannot both take the plan's
   * included number. A step that fails after the payment refunds it: a purchase either leaves the
   * number, its charge and its ledger row, or none of them. Test keys pass the same gates, then
   * only add the number (`simulated`).
   */
  const buy = (principal: Principal, input: BuyNumberInput) => {
    let collected: Payment | undefined
    return Effect.gen(function*() {
      const ws = principal.workspaceId
      const parsed = normalizePhone(input.phoneNumber)
      if (parsed._tag === "Left") return yield* new InvalidArgument({ message: `phoneNumber: ${parsed.left}` })
      const e164 = parsed.right
      const type = numberTypeOf(e164)
      const simulated = principal.kind === "test"
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(`numbers:${ws}`)
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
          // Only numbers ordered at the carrier count toward the plan's included local number.
          const ordered = (yield* numbers.listActive(ws)).filter((n) => n.ordered && n.number.type === "local")
          const purchase = { e164, type, localNumbers: ordered.length }
          yield* numberPurchaseGate(workspace.billing, purchase)
          const number: WorkspaceNumber = {
            e164,
            type,
            voiceMode: "app",
            agentId: null,
            forwardTo: null,
            assignedUserId: null,
            status: "active"
          }
          const { uuid } = yield* Ids
          const insert = numbers.insert(ws, number, uuid(), !simulated).pipe(
            Effect.catchAll(() => Effect.fail(inventoryError(numberTaken(e164))))
          )
          if (simulated) {
            yield* insert
            return { number, simulated: true as const }
          }
          const charge = numberCharge(purchase, new Date(yield* Clock.currentTimeMillis))
          if (charge.amountCents > 0) {
            collected = yield* payments.charge({
              workspace,
              amountCents: charge.amountCents,
              description: charge.description,
              idempotencyKey: uuid(),
              metadata: { workspaceId: ws }
            }).pipe(Effect.mapError(asPrecondition))
          }
          yield* inventory.order(e164, type).pipe(Effect.mapError(inventoryError))
          if (Option.isSome(testNumber)) yield* numbers.markOrdered(ws, e164)
          else yield* insert
          yield* ledger.append(ws, [charge])
          return { number: Option.match(testNumber, { onNone: () => number, onSome: (n) => n.number }) }
        })
      )
    }).pipe(
      Effect.onExit((
        exit
      ) => (exit._tag === "Failure" && collected !== undefined
        ? Effect.ignore(payments.refund(collected))
        : Effect.void)
      )
    )
  }

  return { list, available, buy } as const
})

export class Numbers extends Context.Tag("core/Numbers")<Numbers, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Numbers, make)
