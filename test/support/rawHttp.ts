/** Raw HTTP/1.1 over a TCP socket, for what no HTTP client sends: malformed requests, slow ones, oversized heads. */
import { connect } from "node:net"
import { expect } from "vitest"

export interface RawAnswer {
  readonly status: number
  /** Lower-cased names. */
  readonly headers: Record<string, string>
  readonly body: string
  /** Everything received. */
  readonly raw: string
  /** From connecting until the server closed the connection. */
  readonly closedAfterMs: number
}

/** An answer as received (status line, headers, body). */
export const parseAnswer = (raw: string, closedAfterMs = 0): RawAnswer => {
  const [head = "", ...rest] = raw.split("\r\n\r\n")
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const at = line.indexOf(":")
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim()
  }
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body: rest.join("\r\n\r\n"), raw, closedAfterMs }
}

/** A raw TCP exchange: each step is bytes to write or a pause in ms; resolves with all that came back once the server closes. */
export const exchange = (port: number, steps: ReadonlyArray<string | number>, limitMs = 10_000) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const started = Date.now()
    const socket = connect(port, "127.0.0.1")
    let raw = ""
    let closed = false
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the connection open for ${limitMs} ms; received: ${JSON.stringify(raw)}`))
    }, limitMs)
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (raw += chunk))
    // A reset after the answer (the server closing while our bytes were in flight) still counts as closed.
    socket.on("error", () => undefined)
    socket.on("close", () => {
      closed = true
      clearTimeout(timer)
      resolve(parseAnswer(raw, Date.now() - started))
    })
    socket.once("connect", async () => {
      for (const step of steps) {
        if (closed) return
        if (typeof step === "number") await new Promise((r) => setTimeout(r, step))
        else socket.write(step)
      }
    })
  })

/** The documented error envelope with a request id matching the header, CORS, and the connection closed. */
export const expectEnvelope = (res: RawAnswer, status: number, requestId: RegExp = /^req_[0-9a-f]{32}$/) => {
  expect(res.status, res.raw).toBe(status)
  expect(res.headers["content-type"]).toBe("application/json")
  expect(res.headers["connection"]).toBe("close")
  expect(res.headers["access-control-allow-origin"]).toBe("*")
  expect(res.headers["x-request-id"]).toMatch(requestId)
  const body = JSON.parse(res.body) as { error: { code: string; message: string; requestId: string } }
  expect(Object.keys(body)).toEqual(["error"])
  expect(body.error.code).toBe("invalid_argument")
  expect(body.error.requestId).toBe(res.headers["x-request-id"])
  expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(res.body))
  return body.error.message
}
