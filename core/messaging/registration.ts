/**
 * What the texting gate reads from the 10DLC registration. Until the registration work exists the
 * default layer reports every workspace as not filed, so live keys cannot text (test keys skip it).
 */
import { Context, Effect, Layer } from "effect"

export type TextingState = "not_filed" | "in_review" | "awaiting_pin" | "rejected" | "approved"

export interface RegistrationGate {
  readonly textingState: (workspaceId: string) => Effect.Effect<TextingState>
}
export const RegistrationGate = Context.GenericTag<RegistrationGate>("core/RegistrationGate")

export const layerNotFiled = Layer.succeed(RegistrationGate, RegistrationGate.of({ textingState: () => Effect.succeed("not_filed") }))

export const gateMessage: Record<Exclude<TextingState, "approved">, string> = {
  not_filed: "Texting is not registered: the 10DLC registration is not filed",
  in_review: "Texting is not registered yet: the registration is in carrier review",
  awaiting_pin: "Texting is not registered yet: the registration is waiting for the sole-proprietor PIN",
  rejected: "Texting is not registered: the registration was rejected"
}
