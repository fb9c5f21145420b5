import { Effect } from "effect"
import { fileMessagingRegistration, getMessagingStatus, refreshMessagingStatus, resendMessagingOtp, verifyMessagingOtp } from "../../../core/tools/registration.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"
import { CurrentPrincipal } from "../platform.ts"

export const MessagingLive = group(Api, "messaging", (handlers) =>
  handlers
    .handle("status", () => Effect.flatMap(CurrentPrincipal, (p) => getMessagingStatus.run(p, {})))
    // Uninterruptible: a client that goes away must not cut a filing between its charge and its record.
    .handle("file", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => fileMessagingRegistration.run(p, payload)), { uninterruptible: true })
    .handle("refresh", () => Effect.flatMap(CurrentPrincipal, (p) => refreshMessagingStatus.run(p, {})), { uninterruptible: true })
    .handle("verifyOtp", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => verifyMessagingOtp.run(p, payload)), { uninterruptible: true })
    .handle("resendOtp", () => Effect.flatMap(CurrentPrincipal, (p) => resendMessagingOtp.run(p, {})), { uninterruptible: true })
)
