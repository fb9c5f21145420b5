/**
 * Progress without a client: every `pollMs`, asks the registry about registrations still in review
 * (`awaitingSteps`), and about live campaigns' numbers still to assign, and moves them forward, so a registration advances whether or not anyone calls
 * `POST /messaging/refresh`. Several processes may poll one database: each workspace is moved under
 * its registration lock (Texting.advance), so none files or charges twice.
 */
import { Duration, Effect, Layer } from "effect"
import { Registrations } from "./service.ts"
import { RegistrationStore } from "./store.ts"

/** Registrations asked about per round; the least recently updated first, so none starves. */
const BATCH = 50

export const pollOnce = Effect.gen(function*() {
  const store = yield* RegistrationStore
  const texting = yield* Registrations
  // Registrations in review, then live campaigns with numbers still to assign (core/registration/assignment.ts).
  const inReview = yield* store.awaitingRegistry(BATCH)
  const assigning = yield* store.awaitingAssignment(BATCH)
  const due = [...new Set([...inReview, ...assigning])]
  for (const workspaceId of due) {
    yield* texting.advance(workspaceId).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Registry poller: a registration could not be moved forward", cause)
      ),
      Effect.annotateLogs({ workspaceId })
    )
  }
  return due.length
})

export const layer = (options: { readonly pollMs: number }) =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      pollOnce.pipe(
        Effect.catchAllCause((cause) => Effect.logError("Registry poller: a round failed", cause)),
        Effect.zipRight(Effect.sleep(Duration.millis(options.pollMs))),
        Effect.forever
      )
    )
  )
