/**
 * Fetch-style serving (Deno, tests). The web request wrapper of @effect/platform reads bodies with no
 * size limit, so the body is read here with a 1 MiB cap first. An oversized body is replaced by an
 * empty one that declares its real size, so the global middleware answers the usual 400 envelope.
 * Deno.serve bounds neither a request nor its body in time, so the body must also arrive within the
 * request timeout: a body still trickling in after it is answered 408, as Node's server does.
 */
import { readCapped } from "../net/streams.ts"
import { CORS_HEADERS, DEFAULT_TIMEOUTS, errorBody, MAX_BODY_BYTES, requestIdFor } from "./platform.ts"

type Handler = (request: Request) => Promise<Response>

/** An answer given before the app sees the request (a body that timed out or could not be read), in the envelope. */
const refused = (request: Request, status: number, message: string) => {
  const requestId = requestIdFor(request.headers.get("x-request-id"))
  return new Response(JSON.stringify(errorBody("invalid_argument", message, requestId)), {
    status,
    // The rest of the body is not wanted: the connection ends with this answer.
    headers: { "content-type": "application/json", "x-request-id": requestId, ...CORS_HEADERS, connection: "close" }
  })
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])

/**
 * Whether no body, or an empty one, reads as JSON `null`, as on the Node server (nodeServer.ts): a
 * JSON request, so a route whose body is optional (`POST /numbers/{e164}/disconnect`) may be sent none.
 */
const emptyIsNull = (request: Request) =>
  BODY_METHODS.has(request.method) &&
  (request.headers.get("content-type") ?? "application/json").toLowerCase().includes("application/json")

export const withBodyLimit =
  (handler: Handler, bodyTimeoutMs: number = DEFAULT_TIMEOUTS.requestMs): Handler => async (request) => {
    if (request.body === null && !emptyIsNull(request)) return handler(request)
    const declared = Number(request.headers.get("content-length") ?? "0")
    let body: Uint8Array | null
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(), bodyTimeoutMs)
    try {
      body = request.body === null
        ? new Uint8Array()
        : declared > MAX_BODY_BYTES
        ? null
        : await readCapped(request.body, MAX_BODY_BYTES, deadline.signal)
      if (body?.byteLength === 0 && emptyIsNull(request)) body = new TextEncoder().encode("null")
    } catch {
      return deadline.signal.aborted
        ? refused(request, 408, `The request body did not arrive within ${bodyTimeoutMs / 1000} s`)
        : refused(request, 400, "Request body could not be read")
    } finally {
      clearTimeout(timer)
    }
    const headers = new Headers(request.headers)
    if (body === null) headers.set("content-length", String(MAX_BODY_BYTES + 1))
    else headers.set("content-length", String(body.byteLength))
    return handler(
      new Request(request.url, {
        method: request.method,
        headers,
        body: body === null ? null : (body as BodyInit),
        signal: request.signal
      })
    )
  }
