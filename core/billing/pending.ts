/**
 * Pending charges: how a purchase charges outside any transaction that holds a workspace lock, and
 * survives a crash between its charge and its commit (issue 43, "Charge outside transactions").
 *
 *   1. `reserve`, in the purchase's first transaction (under its lock, after its gates): a record of
 *      what will be charged, for what (`purpose`: one in flight per purpose), leased for `LEASE_MS`;
 *   2. `collect`, outside any transaction: the charge, with the record's id as its idempotency key;
 *   3. the purchase's carrier calls, outside any transaction;
 *   4. `settle`, in the purchase's second transaction: the ledger rows, and the record marked
 *      settled, only if it still is pending (else the transaction fails, and the purchase with it);
 *   5. on a failure after step 2, `abandon`: refunded, then marked.
 *
 * `fulfil` runs steps 2 to 5 around the purchase's own calls and transaction.
 *
 * A process that dies leaves the record pending. Once its lease runs out `recover` asks the provider
 * again with the same key (answering the same payment, collecting nothing new), then: a `purchase`
 * (the item was not recorded) is refunded; a `fee` (the item was recorded before the charge: the
 * messaging add-on at approval) is written to the ledger. No charge is kept without its item, none
 * is collected twice.
 */
import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import { AuditLog } from "../audit/store.ts"
import { FailedPrecondition } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import type { Workspace } from "../workspaces/model.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import { Charge } from "./ledger.ts"
import { asPrecondition, type Payment, Payments } from "./payments.ts"
import { collectable } from "./pricing.ts"
import { LedgerStore } from "./store.ts"

/** `purchase`: the item is recorded with the charge; `fee`: the item was recorded before it. */
export const PendingKind = Schema.Literal("purchase", "fee")
export type PendingKind = typeof PendingKind.Type

/** `refunding`: a purchase given up, its refund not yet confirmed. */
export const PendingState = Schema.Literal("pending", "refunding", "settled", "refunded", "failed")
export type PendingState = typeof PendingState.Type

export const PendingChargeRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  /** What it pays for: `number:+1…`, `filing`, `addon:<campaign id>`. One pending per purpose. */
  purpose: Schema.String,
  kind: PendingKind,
  charges: Schema.Array(Charge),
  amountCents: Schema.Int,
  state: PendingState,
  /** Real time: until then the purchase that made it may still settle it. */
  leaseUntil: Schema.String,
  paymentId: Schema.NullOr(Schema.String),
  /** On the workspace's clock: the ledger rows' time. */
  at: Schema.String,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type PendingChargeRecord = typeof PendingChargeRecord.Type

/** How long a purchase may take from its reservation to its settlement before `recover` takes it over. */
export const LEASE_MS = 120_000

export interface PendingChargeStore {
  /** In the caller's transaction; false when a charge of the same purpose is pending. */
  readonly reserve: (record: PendingChargeRecord) => Effect.Effect<boolean>
  /** Moves a charge from `from` to `to`; false when it is no longer in `from` (another process moved it). */
  readonly move: (
    workspaceId: string,
    id: string,
    from: PendingState,
    to: PendingState,
    paymentId: string | null,
    at: string
  ) => Effect.Effect<boolean>
  /**
   * Pending or refunding charges whose lease ran out before `now` (of one workspace, or any),
   * leased again until `leaseUntil`: one claim across processes.
   */
  readonly claimExpired: (
    now: string,
    leaseUntil: string,
    limit: number,
    workspaceId: string | null
  ) => Effect.Effect<ReadonlyArray<PendingChargeRecord>>
  /** The workspace's pending charges whose purpose starts with `prefix`. */
  readonly pending: (workspaceId: string, prefix: string) => Effect.Effect<ReadonlyArray<PendingChargeRecord>>
}
export const PendingChargeStore = Context.GenericTag<PendingChargeStore>("core/PendingChargeStore")

/** The idempotency key of a pending charge. */
export const pendingKey = (id: string) => `pending_${id}`

export const busy = (what: string) =>
  new FailedPrecondition({ message: `${what} is already in progress; try again when it has finished` })

const make = Effect.gen(function*() {
  const store = yield* PendingChargeStore
  const payments = yield* Payments
  const ledger = yield* LedgerStore
  const workspaces = yield* WorkspaceStore
  const audit = yield* AuditLog
  const tx = yield* Transactor

  /** Step 1, in the caller's transaction. `at` is the purchase's time on the workspace's clock. */
  const reserve = (
    workspaceId: string,
    input: {
      purpose: string
      kind: PendingKind
      charges: ReadonlyArray<Charge>
      at: string
      busy: string
      /** 0 leaves the charge to `recover` at once: a fee whose item committed with the reservation. */
      leaseMs?: number
    }
  ) =>
    Effect.gen(function*() {
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      const charges = collectable(input.charges)
      const record: PendingChargeRecord = {
        id: (yield* Ids).uuid(),
        workspaceId,
        purpose: input.purpose,
        kind: input.kind,
        charges,
        amountCents: charges.reduce((sum, c) => sum + c.amountCents, 0),
        state: "pending",
        leaseUntil: new Date(now + (input.leaseMs ?? LEASE_MS)).toISOString(),
        paymentId: null,
        at: input.at,
        createdAt: new Date(now).toISOString(),
        updatedAt: new Date(now).toISOString()
      }
      if (!(yield* store.reserve(record))) return yield* busy(input.busy)
      return record
    })

  const charge = (workspace: Pick<Workspace, "id" | "billing">, p: PendingChargeRecord) =>
    payments.charge({
      workspace,
      amountCents: p.amountCents,
      description: p.charges.map((c) => c.description).join("; "),
      idempotencyKey: pendingKey(p.id),
      metadata: { workspaceId: p.workspaceId, pendingChargeId: p.id }
    })

  /** Step 2, outside any transaction: nothing to collect for a total of 0. */
  const collect = (workspace: Pick<Workspace, "id" | "billing">, p: PendingChargeRecord) =>
    p.amountCents > 0 ? Effect.map(charge(workspace, p), Option.some) : Effect.succeedNone

  /** Step 4, in the caller's transaction: fails (rolling it back) when `recover` took the charge over. */
  const settle = (p: PendingChargeRecord, payment: Option.Option<Payment>) =>
    Effect.gen(function*() {
      const paymentId = Option.getOrNull(Option.map(payment, (x) => x.id))
      if (!(yield* store.move(p.workspaceId, p.id, "pending", "settled", paymentId, yield* nowIso))) {
        return yield* new FailedPrecondition({
          message: "The purchase took too long and was given up (any charge is refunded); try again"
        })
      }
      yield* ledger.append(p.workspaceId, p.charges, p.at)
    })

  /** Refunds a given-up purchase, marked `refunding` first so a crash mid-refund is finished by `recover`. */
  const refundAndClose = (p: PendingChargeRecord, payment: Option.Option<Payment>, from: PendingState) =>
    Effect.gen(function*() {
      const paymentId = Option.getOrNull(Option.map(payment, (x) => x.id))
      if (Option.isNone(payment)) {
        yield* store.move(p.workspaceId, p.id, from, "failed", null, yield* nowIso)
        return
      }
      if (
        from === "pending" && !(yield* store.move(p.workspaceId, p.id, from, "refunding", paymentId, yield* nowIso))
      ) {
        return
      }
      yield* payments.refund(payment.value)
      yield* store.move(p.workspaceId, p.id, "refunding", "refunded", paymentId, yield* nowIso)
    })

  /** Step 5: the purchase failed after `reserve`. A refund the provider does not take now is left to `recover`. */
  const abandon = (p: PendingChargeRecord, payment: Option.Option<Payment>) =>
    refundAndClose(p, payment, "pending").pipe(
      Effect.catchAll((e) => Effect.logWarning("A given-up purchase could not be refunded yet", e.message))
    )

  /** Takes over one charge whose purchase died: asks the provider again with its key, then refunds or records it. */
  const recoverOne = (p: PendingChargeRecord) =>
    Effect.gen(function*() {
      const workspace = Option.getOrThrow(yield* workspaces.get(p.workspaceId))
      const outcome = p.amountCents > 0
        ? yield* Effect.either(Effect.map(charge(workspace, p), Option.some))
        : Either.right(Option.none<Payment>())
      if (Either.isLeft(outcome)) {
        if (outcome.left.reason === "unavailable") return // asked again after the next lease
        const declined = yield* store.move(p.workspaceId, p.id, p.state, "failed", null, yield* nowIso)
        if (declined && p.kind === "fee") {
          yield* audit.append(p.workspaceId, {
            actor: "system",
            action: "billing.charge.declined",
            detail: { purpose: p.purpose, amountCents: p.amountCents, message: outcome.left.message }
          })
        }
        return
      }
      if (p.kind === "purchase" || p.state === "refunding") return yield* refundAndClose(p, outcome.right, p.state)
      yield* tx.withTransaction(
        Effect.asVoid(Effect.either(settle(p, outcome.right)))
      )
    }).pipe(
      Effect.catchAll((e) => Effect.logWarning("A pending charge could not be recovered yet", e.message)),
      Effect.annotateLogs({ workspaceId: p.workspaceId, pendingChargeId: p.id })
    )

  /**
   * Takes over up to `limit` charges whose lease ran out (with `all`, every pending one: no other
   * process can hold any), of one workspace or of all. A fee reserved with `leaseMs: 0` is collected
   * here, right after the transaction that reserved it (or by the billing worker).
   */
  const recover = (limit: number, options: { readonly all?: boolean; readonly workspaceId?: string } = {}) =>
    Effect.gen(function*() {
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      const expired = yield* store.claimExpired(
        options.all === true ? "infinity" : new Date(now).toISOString(),
        new Date(now + LEASE_MS).toISOString(),
        limit,
        options.workspaceId ?? null
      )
      yield* Effect.forEach(expired, recoverOne, { discard: true })
      return expired.length
    })

  /**
   * Steps 2 to 5: collects the charge, then runs `body` with the payment (the carrier's calls, then
   * the transaction that records the purchase and `settle`s). A declined card closes the pending
   * charge; a provider that did not answer leaves it to `recover`, which asks again with the same
   * key (the charge may have gone through); a failure of `body` refunds the payment.
   */
  const fulfil = <A, E, R>(
    workspace: Pick<Workspace, "id" | "billing">,
    p: PendingChargeRecord,
    body: (payment: Option.Option<Payment>) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | FailedPrecondition, R> =>
    Effect.gen(function*() {
      const collected = yield* Effect.either(collect(workspace, p))
      if (Either.isLeft(collected)) {
        if (collected.left.reason !== "unavailable") {
          yield* store.move(p.workspaceId, p.id, "pending", "failed", null, yield* nowIso)
        }
        return yield* asPrecondition(collected.left)
      }
      const payment = collected.right
      return yield* body(payment).pipe(Effect.onError(() => abandon(p, payment)))
    })

  return { reserve, fulfil, settle, recover, pending: store.pending } as const
})

export class PendingCharges extends Context.Tag("core/PendingCharges")<
  PendingCharges,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(PendingCharges, make)
