/**
 * The lock on PGlite's one connection: one holder at a time (a statement, or a transaction from
 * BEGIN to its end), handed over in the order asked, except that work marked `Urgent`
 * (core/kernel/transactor.ts) goes before every other waiter. Under a burst, a dozen API
 * transactions may be waiting; the webhook worker's recording of finished attempts must not wait
 * behind them, as a crash meanwhile sends those attempts again.
 */
import { Effect, FiberRef } from "effect"
import { Urgent } from "../../core/kernel/transactor.ts"

export interface ConnectionLock {
  /** Waits (interruptibly) for the connection; the caller holds it until `release`. */
  readonly acquire: Effect.Effect<void>
  readonly release: Effect.Effect<void>
  /** Runs `self` holding the connection. */
  readonly withLock: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeConnectionLock = (): ConnectionLock => {
  let held = false
  const urgent: Array<() => void> = []
  const normal: Array<() => void> = []

  const releaseNow = () => {
    const next = urgent.shift() ?? normal.shift()
    if (next === undefined) held = false
    else next()
  }

  const take = (isUrgent: boolean) =>
    Effect.async<void>((resume) => {
      if (!held) {
        held = true
        return resume(Effect.void)
      }
      let granted = false
      const waiter = () => {
        granted = true
        resume(Effect.void)
      }
      const queue = isUrgent ? urgent : normal
      queue.push(waiter)
      // Interrupted while waiting: leave the queue, or pass on the connection if it was handed over meanwhile.
      return Effect.sync(() => {
        if (granted) return releaseNow()
        queue.splice(queue.indexOf(waiter), 1)
      })
    })

  const acquire = Effect.flatMap(FiberRef.get(Urgent), take)
  const release = Effect.sync(releaseNow)
  return {
    acquire,
    release,
    withLock: (self) => Effect.acquireUseRelease(Effect.interruptible(acquire), () => self, () => release)
  }
}
