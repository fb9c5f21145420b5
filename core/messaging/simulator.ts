/**
 * The test helpers' use cases (CONTRACT "Test helpers"): simulated inbound traffic and carrier
 * status reports, for test keys only, on the caller's own numbers and messages.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { ConversationStore } from "../conversations/store.ts"
import { displayText } from "../kernel/display.ts"
import { NotFound, PermissionDenied } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids } from "../kernel/ids.ts"
import { normalizePhone } from "../kernel/phone.ts"
import { Text } from "../kernel/text.ts"
import { NumberStore } from "../numbers/model.ts"
import { RegistrySimulator } from "../registration/registry.ts"
import { WorkspaceClock } from "../workspaces/clock.ts"
import { Messaging } from "./service.ts"
import { ActivityViews } from "./views.ts"

export const SimulatedInboundInput = Schema.Struct({
  from: Schema.String.pipe(Schema.maxLength(32)),
  to: Schema.String.pipe(Schema.maxLength(32)),
  body: Schema.optional(Text(1600)),
  mediaUrls: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(2048))).pipe(Schema.maxItems(10)))
}).annotations({ parseOptions: { onExcessProperty: "error" } })

export const SimulatedStatusInput = Schema.Struct({
  activityId: Schema.String,
  status: Schema.Literal(
    "queued",
    "sending",
    "sent",
    "delivered",
    "sending_failed",
    "delivery_failed",
    "delivery_unconfirmed",
    "expired"
  )
}).annotations({ parseOptions: { onExcessProperty: "error" } })

export const RegistryOutcomeInput = Schema.Struct({
  brand: Schema.optional(Schema.Literal("accept", "reject", "otp")),
  campaign: Schema.optional(Schema.Literal("approve", "reject")),
  assignment: Schema.optional(Schema.Literal("assign", "fail")),
  reasons: Schema.optional(Schema.Array(Text(500)).pipe(Schema.maxItems(10)))
}).annotations({ identifier: "RegistryOutcomeInput", parseOptions: { onExcessProperty: "error" } })

/** At most a year at a time. */
export const ClockInput = Schema.Struct({
  advanceSeconds: Schema.Int.pipe(Schema.between(1, 366 * 24 * 3600))
}).annotations({ identifier: "ClockInput", parseOptions: { onExcessProperty: "error" } })

export const SentOtpAnswer = Schema.Struct({ pin: Schema.String, sentAt: Schema.String })
export const ClockAnswer = Schema.Struct({ clock: Schema.Struct({ now: Schema.String, offsetSeconds: Schema.Number }) })

/** Test helpers answer test keys only; a live key gets 403. */
export const testKeysOnly = (p: Principal) =>
  p.kind === "test" ? Effect.void : Effect.fail(new PermissionDenied({ message: "Test helpers accept test keys only" }))

export const make = Effect.gen(function*() {
  const messaging = yield* Messaging
  const store = yield* ConversationStore
  const numbers = yield* NumberStore
  const views = yield* ActivityViews
  const registry = yield* RegistrySimulator
  const clock = yield* WorkspaceClock

  /** An inbound SMS/MMS to the caller's number `to`, as if the carrier had delivered it. */
  const inboundMessage = (p: Principal, input: typeof SimulatedInboundInput.Type) =>
    Effect.gen(function*() {
      yield* testKeysOnly(p)
      // Only the caller's own numbers: a test key cannot inject traffic into another workspace.
      const to = normalizePhone(input.to)
      const owned = to._tag === "Right" ? yield* numbers.findByE164(to.right) : Option.none()
      if (Option.isNone(owned) || owned.value.workspaceId !== p.workspaceId) {
        return yield* new NotFound({ message: `to: ${displayText(input.to, 32)} is not a number of this workspace` })
      }
      const { uuid } = yield* Ids
      const activity = yield* messaging.receive({
        carrierMessageId: `sim_in_${uuid()}`,
        from: input.from,
        to: input.to,
        body: input.body ?? null,
        media: (input.mediaUrls ?? []).map((url) => ({ url, contentType: null }))
      }, true)
      const thread = Option.getOrThrow(yield* store.getThread(p.workspaceId, activity.conversationId))
      return {
        message: yield* views.view(activity),
        conversationId: activity.conversationId,
        contactId: thread.contactId!
      }
    })

  /** A carrier status report for one of the caller's outbound messages. */
  const deliveryStatus = (p: Principal, input: typeof SimulatedStatusInput.Type) =>
    Effect.gen(function*() {
      yield* testKeysOnly(p)
      const outbound = (id: string) =>
        Effect.map(store.getActivity(p.workspaceId, id), Option.filter((a) => a.direction === "outbound"))
      const activity = yield* findOr404(
        input.activityId,
        outbound,
        new NotFound({ message: "No such outbound message" })
      )
      const updated = yield* messaging.applyStatusTo(activity, input.status)
      return { message: yield* views.view(updated) }
    })

  /** The simulated registry's next review of this workspace's filings (mock mode, or every filing under CARRIER=simulated). */
  const registryOutcome = (p: Principal, input: typeof RegistryOutcomeInput.Type) =>
    Effect.zipRight(testKeysOnly(p), Effect.as(registry.setNextOutcome(p.workspaceId, input), { outcome: input }))

  /** The last PIN the simulated registry texted to this workspace's sole proprietor. */
  const lastOtp = (p: Principal) =>
    Effect.zipRight(
      testKeysOnly(p),
      Effect.flatMap(
        registry.lastOtp(p.workspaceId),
        Option.match({
          onNone: () =>
            Effect.fail(new NotFound({ message: "The simulated registry has texted no PIN to this workspace" })),
          onSome: Effect.succeed
        })
      )
    )

  /** Moves the workspace's clock forward (PIN expiry, the resend limit, the idempotency window of test keys). */
  const advanceClock = (p: Principal, input: typeof ClockInput.Type) =>
    Effect.gen(function*() {
      yield* testKeysOnly(p)
      const offset = yield* clock.advance(p.workspaceId, input.advanceSeconds * 1000)
      const now = (yield* Clock.currentTimeMillis) + offset
      return { clock: { now: new Date(now).toISOString(), offsetSeconds: Math.floor(offset / 1000) } }
    })

  return { inboundMessage, deliveryStatus, registryOutcome, lastOtp, advanceClock } as const
})

export class Simulator extends Context.Tag("core/Simulator")<Simulator, Effect.Effect.Success<typeof make>>() {}
export const layer = Layer.effect(Simulator, make)
