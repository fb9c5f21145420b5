/**
 * Reads a byte stream whole, or null as soon as it passes `maxBytes` (the rest is never read).
 * When `signal` aborts, the stream is cancelled and the read rejects with the signal's reason. Each
 * read is raced against the signal rather than left to the stream: undici's response body under
 * Deno does not end a pending read when its request's signal aborts.
 */
export const readCapped = async (
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  signal?: AbortSignal
): Promise<Uint8Array | null> => {
  const reader = body.getReader()
  let onAbort = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason)
  })
  signal?.addEventListener("abort", onAbort, { once: true })
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    signal?.throwIfAborted()
    for (;;) {
      const { done, value } = await (signal ? Promise.race([reader.read(), aborted]) : reader.read())
      if (done) break
      size += value.byteLength
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined)
        return null
      }
      chunks.push(value)
    }
  } catch (e) {
    void reader.cancel().catch(() => undefined)
    throw e
  } finally {
    signal?.removeEventListener("abort", onAbort)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
