/** Reads a byte stream whole, or null as soon as it passes `maxBytes` (the rest is never read). */
export const readCapped = async (body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | null> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return null
    }
    chunks.push(value)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
