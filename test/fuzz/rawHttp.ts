/**
 * HTTP/1.1 over a plain TCP socket, so the fuzz suite's bytes reach the server exactly as generated:
 * fetch and node:http refuse or rewrite raw control characters in the request line and headers,
 * duplicate headers, and bodies that disagree with their content type. One connection per request
 * (`Connection: close`): an answer from Node's own parser closes the socket anyway.
 */
import { connect } from "node:net"

export interface RawRequest {
  readonly method: string
  /** The request target as sent: path and query, already encoded (or deliberately not). */
  readonly target: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  /** The body; `latin1` sends each character as one byte (invalid UTF-8 on purpose). */
  readonly body: string | null
  readonly bodyEncoding: "utf8" | "latin1"
}

export interface RawResponse {
  readonly status: number
  /** Lower-cased names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

const headerBytes = (req: RawRequest, host: string, body: Buffer | null) => {
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `host: ${host}`, "connection: close"]
  for (const [name, value] of req.headers) lines.push(`${name}: ${value}`)
  if (body !== null && !req.headers.some(([n]) => n.toLowerCase() === "content-length")) {
    lines.push(`content-length: ${body.length}`)
  }
  return Buffer.from(lines.join("\r\n") + "\r\n\r\n", "utf8")
}

/** Decodes a chunked body; a truncated one yields what arrived. */
const dechunk = (raw: Buffer): Buffer => {
  const parts: Array<Buffer> = []
  let at = 0
  while (at < raw.length) {
    const eol = raw.indexOf("\r\n", at)
    if (eol < 0) break
    const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16)
    if (!Number.isFinite(size) || size === 0) break
    parts.push(raw.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return Buffer.concat(parts)
}

const parse = (raw: Buffer): RawResponse => {
  const end = raw.indexOf("\r\n\r\n")
  if (end < 0) {
    throw new Error(`no complete response head in ${JSON.stringify(raw.subarray(0, 200).toString("latin1"))}`)
  }
  const [statusLine = "", ...lines] = raw.subarray(0, end).toString("latin1").split("\r\n")
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (status === null) throw new Error(`malformed status line ${JSON.stringify(statusLine)}`)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const rest = raw.subarray(end + 4)
  const length = Number(headers["content-length"])
  const body = /chunked/i.test(headers["transfer-encoding"] ?? "")
    ? dechunk(rest)
    : Number.isInteger(length)
    ? rest.subarray(0, length)
    : rest
  return { status: Number(status[1]), headers, body: body.toString("utf8") }
}

/** Past this many bytes a request waits EARLY_ANSWER_MS for an early answer before it sends the rest. */
const EARLY_ANSWER_AFTER = 64 * 1024
const EARLY_ANSWER_MS = 30

/** Sends one request to `port` on 127.0.0.1 and reads the whole answer; fails after `timeoutMs`. */
export const send = (port: number, req: RawRequest, timeoutMs = 30_000): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const body = req.body === null ? null : Buffer.from(req.body, req.bodyEncoding)
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no complete answer within ${timeoutMs} ms`))
    }, timeoutMs)
    socket.on("data", (d: Buffer) => {
      chunks.push(d)
      // An event stream never ends by itself: its head and first event are its answer.
      const seen = Buffer.concat(chunks)
      const head = seen.indexOf("\r\n\r\n")
      if (head >= 0 && /\r\ncontent-type: text\/event-stream/i.test(seen.subarray(0, head).toString("latin1"))) {
        if (seen.indexOf("\n\n", head + 4) >= 0) socket.destroy()
      }
    })
    // The server may answer and close before it read the whole body: what it sent still counts.
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      try {
        resolve(parse(Buffer.concat(chunks)))
      } catch (e) {
        reject(e)
      }
    })
    const bytes = Buffer.concat([headerBytes(req, `127.0.0.1:${port}`, body), body ?? Buffer.alloc(0)])
    socket.write(bytes.subarray(0, EARLY_ANSWER_AFTER))
    if (bytes.length <= EARLY_ANSWER_AFTER) return
    // Like curl's wait for 100 Continue: a server may answer from the first bytes (a head over its
    // limit, a body too big or of the wrong type) and close. Writing on into the reset connection
    // would make Node drop the socket, and the answer waiting in it, with EPIPE.
    const early = setTimeout(() => {
      socket.off("data", answered)
      if (!socket.destroyed) socket.write(bytes.subarray(EARLY_ANSWER_AFTER))
    }, EARLY_ANSWER_MS)
    const answered = () => clearTimeout(early)
    socket.once("data", answered)
  })
