/** Mutual exclusion by key within this process: one holder per key, others wait in turn. */
import { Effect } from "effect"

export type KeyedLock = (key: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** A lock per key, made on first use and dropped when nobody holds or awaits it. */
export const makeKeyedLock = (): KeyedLock => {
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  return (key) => (self) =>
    Effect.suspend(() => {
      let entry = locks.get(key)
      if (entry === undefined) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, entry)
      }
      const held = entry
      held.users++
      return held.semaphore.withPermits(1)(self).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (--held.users === 0) locks.delete(key)
        }))
      )
    })
}
