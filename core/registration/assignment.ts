/**
 * Assigning a workspace's numbers to its live 10DLC campaign. Carriers take a local number's
 * traffic only once the number is assigned to an active campaign (Telnyx:
 * https://developers.telnyx.com/docs/messaging/10dlc/phone-number-assignment), so when a live
 * registration reaches `campaign_active`, each of its active, ordered, local numbers is assigned
 * through the Registry port, and so is one bought (or seeded) later. The registry completes an
 * assignment asynchronously: the number stays `pending` until a later read (a refresh, the poller,
 * a 10DLC webhook) reports it `assigned`, and until then a live send from it is refused.
 * Test numbers (never ordered), toll-free lines and mock registrations are never assigned.
 */
import { Effect } from "effect"
import type { AuditLog } from "../audit/store.ts"
import { FailedPrecondition } from "../kernel/errors.ts"
import { type NumberRecord, NumberStore } from "../numbers/model.ts"
import type { Registration } from "./record.ts"
import type { AssignmentReport, Registry, RegistryError } from "./registry.ts"

/** The numbers a live campaign must carry: active, ordered at the carrier, local (10DLC is for long codes). */
export const assignable = (n: NumberRecord) => n.ordered && n.number.type === "local" && n.number.status === "active"

/** A live send from a number the campaign does not carry yet (CONTRACT, "On a real carrier"). */
export const notAssigned = (e164: string) =>
  new FailedPrecondition({ message: `${e164} is not yet assigned to the texting campaign` })

/**
 * Asks the registry for every assignable number not asked for yet, and reads where each pending one
 * stands; records what moved. An unavailable registry leaves a number as it was, for the next round.
 * A refused request is read back once (a request that timed out may have gone through), else failed,
 * which the audit log records (`messaging.number.assignment_failed`).
 */
export const assignNumbers = (registry: Registry, numbers: NumberStore, audit: AuditLog, r: Registration) =>
  Effect.gen(function*() {
    if (r.mock || r.step !== "campaign_active" || r.campaign.id === null) return
    const campaignId = r.campaign.id
    const due = (yield* numbers.listActive(r.workspaceId)).filter((n) =>
      assignable(n) && (n.campaignAssignment === null || n.campaignAssignment === "pending")
    )
    for (const n of due) {
      const e164 = n.number.e164
      const asked: Effect.Effect<AssignmentReport, RegistryError> = n.campaignAssignment === null
        ? registry.assignNumber(r.workspaceId, campaignId, e164).pipe(
          Effect.catchIf(
            (e) => e.reason === "rejected",
            (refused) =>
              registry.assignmentStatus(r.workspaceId, e164).pipe(
                Effect.orElseSucceed((): AssignmentReport => ({
                  phoneNumber: e164,
                  status: "failed",
                  failureReasons: [refused.message]
                }))
              )
          )
        )
        : registry.assignmentStatus(r.workspaceId, e164)
      yield* asked.pipe(
        Effect.flatMap((report) =>
          report.status === n.campaignAssignment
            ? Effect.void
            : Effect.zipRight(
              numbers.setCampaignAssignment(e164, report.status),
              // The operator sees a refusal in the audit log: the number stays unable to text live.
              report.status === "failed"
                ? audit.append(r.workspaceId, {
                  actor: "system",
                  action: "messaging.number.assignment_failed",
                  detail: { e164, campaignId, reasons: report.failureReasons }
                })
                : Effect.void
            )
        ),
        Effect.catchAll((e) =>
          Effect.logWarning("Texting registration: a number's campaign assignment could not be moved", e.message)
        ),
        Effect.annotateLogs({ workspaceId: r.workspaceId })
      )
    }
  })
