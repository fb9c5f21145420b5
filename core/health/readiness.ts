/**
 * Readiness: whether this process should receive traffic. A load balancer or orchestrator asks
 * `GET /readyz`; each check answers "ok" or a short reason, never a secret or an error's text.
 * The store answers for the database and its migrations (Readiness, a port); the webhook worker
 * reports its own liveness (WorkerLiveness).
 */
import { Context, Duration, Effect, Layer } from "effect"

/**
 * The database answers a trivial query: "ok", else "unreachable" (or no answer within the bound);
 * "read_only" when it answers but takes no writes (a standby not yet promoted), so every write
 * would be refused.
 */
export type DatabaseCheck = "ok" | "unreachable" | "read_only"
/** Every migration the code has is applied: "ok", "pending" (some are not), or "unknown" (the database did not answer). */
export type MigrationsCheck = "ok" | "pending" | "unknown"
/** The webhook worker: "ok" running, "disabled" by configuration (WEBHOOK_WORKER=false), "stopped" after having run. */
export type WorkerCheck = "ok" | "disabled" | "stopped"

export interface StoreReadiness {
  readonly database: DatabaseCheck
  readonly migrations: MigrationsCheck
}

/** The store's side of readiness (adapters/sql/health.ts, adapters/memory/health.ts). */
export class Readiness
  extends Context.Tag("core/Readiness")<Readiness, { readonly check: Effect.Effect<StoreReadiness> }>()
{}

/**
 * The webhook worker's liveness flag: "disabled" until a worker starts in this process, which sets it
 * "ok", and "stopped" once its loops end. One per process, shared by the worker and `/readyz`.
 */
export class WorkerLiveness extends Context.Tag("core/WorkerLiveness")<WorkerLiveness, { state: WorkerCheck }>() {}

export const layerWorkerLiveness = Layer.sync(WorkerLiveness, () => ({ state: "disabled" as WorkerCheck }))

export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: StoreReadiness & { readonly webhookWorker: WorkerCheck }
}

/** A probe answers within this bound even when the database hangs (a pool exhausted, a lock held). */
export const CHECK_TIMEOUT = Duration.seconds(2)

const unanswered: StoreReadiness = { database: "unreachable", migrations: "unknown" }

/** Every check at once; ready when each is "ok", or the worker is disabled by configuration. */
export const readiness: Effect.Effect<ReadinessReport, never, Readiness | WorkerLiveness> = Effect.flatMap(
  Effect.all([Readiness, WorkerLiveness]),
  ([store, worker]) =>
    Effect.map(
      store.check.pipe(
        Effect.timeoutTo({ duration: CHECK_TIMEOUT, onTimeout: () => unanswered, onSuccess: (r) => r }),
        Effect.catchAllCause(() => Effect.succeed(unanswered))
      ),
      (checks) => ({
        ready: checks.database === "ok" && checks.migrations === "ok" && worker.state !== "stopped",
        checks: { ...checks, webhookWorker: worker.state }
      })
    )
)
