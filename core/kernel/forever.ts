import { type Duration, Effect, Schedule } from "effect"

/**
 * Runs `step` forever: again at once while it says more work may be waiting, else after `idle` or
 * an earlier `wake`. A step that took less than it asked for has emptied the queue as it stood; what
 * arrived since has signalled `wake`, so waiting costs no latency and saves an empty round's statements.
 */
export const forever = <R>(
  step: Effect.Effect<boolean, never, R>,
  idle: Duration.Duration,
  label: string,
  wake: Effect.Effect<void>
) =>
  step.pipe(
    Effect.catchAllCause((cause) => Effect.logError(`${label} failed`, cause).pipe(Effect.as(false))),
    Effect.flatMap((more) => (more ? Effect.void : Effect.race(Effect.sleep(idle), wake))),
    Effect.repeat(Schedule.forever)
  )
