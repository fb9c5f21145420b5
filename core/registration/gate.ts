/**
 * The texting gate of `POST /messages` for live keys: what the workspace's 10DLC registration
 * (core/registration) allows. Test keys skip it. A mock registration (a test key's, or `mock: true`:
 * simulated, never filed, never charged) never counts for live keys, whatever the carrier: SPEC, "an
 * automated client can never bypass the billing and verification gates" (CONTRACT, "Test keys never
 * open a live path").
 *
 * The pre-approved campaign (SPEC "Messages": "some newly filed numbers can text before campaign
 * approval because they are temporarily attached to a pre-approved campaign of the service"): with
 * `preApprovedCampaign` on, a registration in carrier review (brand or campaign) texts as if
 * approved. Off by default: only an operator whose carrier account has such a campaign should turn
 * it on (PREAPPROVED_CAMPAIGN).
 *
 * Once a live campaign is active, a local number texts only when it is assigned to the campaign
 * (core/registration/assignment.ts): carriers refuse a 10DLC number's traffic until then.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { NumberRecord } from "../numbers/model.ts"
import { assignable } from "./assignment.ts"
import type { Step } from "./machine.ts"
import { RegistrationStore } from "./store.ts"

/** `unassigned`: the campaign is active but the sending number is not assigned to it yet (assignment.ts). */
export type TextingState =
  | "not_filed"
  | "mock_only"
  | "in_review"
  | "awaiting_pin"
  | "rejected"
  | "unassigned"
  | "approved"

export interface RegistrationGate {
  /** What the workspace may text; with `sender`, also whether that number is assigned to the active campaign. */
  readonly textingState: (workspaceId: string, sender?: NumberRecord) => Effect.Effect<TextingState>
}
export const RegistrationGate = Context.GenericTag<RegistrationGate>("core/RegistrationGate")

/** Every workspace not filed: for tests of the gate's refusal without a registration. */
export const layerNotFiled = Layer.succeed(
  RegistrationGate,
  RegistrationGate.of({ textingState: () => Effect.succeed("not_filed") })
)

const stateOf: Record<Step, TextingState> = {
  none: "not_filed",
  profile_ready: "not_filed",
  brand_pending: "in_review",
  brand_ok: "in_review",
  campaign_pending: "in_review",
  brand_otp_pending: "awaiting_pin",
  brand_failed: "rejected",
  campaign_failed: "rejected",
  campaign_active: "approved"
}

export interface GateOptions {
  readonly preApprovedCampaign: boolean
}

/** The gate on the stored registration. */
export const layer = (options: GateOptions) =>
  Layer.effect(
    RegistrationGate,
    Effect.map(RegistrationStore, (store) =>
      RegistrationGate.of({
        textingState: (workspaceId, sender) =>
          Effect.map(store.get(workspaceId), (r): TextingState => {
            const state = Option.match(r, {
              onNone: () => "not_filed" as const,
              onSome: (reg) => (reg.mock ? "mock_only" as const : stateOf[reg.step])
            })
            // The pre-approved campaign is the service's: a number in review texts on it unassigned.
            if (state === "in_review" && options.preApprovedCampaign) return "approved"
            const unassigned = sender !== undefined && assignable(sender) && sender.campaignAssignment !== "assigned"
            return state === "approved" && unassigned ? "unassigned" : state
          })
      }))
  )

/** The refusals that depend on the workspace alone; `unassigned` names the number (assignment.ts `notAssigned`). */
export const gateMessage: Record<Exclude<TextingState, "approved" | "unassigned">, string> = {
  not_filed: "Texting is not registered: the 10DLC registration is not filed",
  mock_only: "Texting is not registered for live messages: the registration on file was filed in mock mode",
  in_review: "Texting is not registered yet: the registration is in carrier review",
  awaiting_pin: "Texting is not registered yet: the registration is waiting for the sole-proprietor PIN",
  rejected: "Texting is not registered: the registration was rejected"
}
