/**
 * Polls `probe` every `everyMs` until it returns a value (not undefined), or fails naming `what` (and
 * the probe's last error) at the deadline: a bounded wait, not a timed assertion.
 */
export const until = async <A>(
  what: string,
  probe: () => Promise<A | undefined> | A | undefined,
  timeoutMs = 60_000,
  everyMs = 200
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
