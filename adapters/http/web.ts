/**
 * Fetch-style serving (Deno, tests). The web request wrapper of @effect/platform reads bodies with no
 * size limit, so the body is read here with a 1 MiB cap first. An oversized body is replaced by an
 * empty one that declares its real size, so the global middleware answers the usual 400 envelope.
 */
import { readCapped } from "../net/streams.ts"
import { MAX_BODY_BYTES } from "./platform.ts"

type Handler = (request: Request) => Promise<Response>

/** A body that could not be read (client gone, server shutting down) still gets the envelope. */
const unreadable = (request: Request) => {
  const given = request.headers.get("x-request-id")
  const requestId = given !== null && /^[A-Za-z0-9_-]{1,64}$/.test(given) ? given : `req_${crypto.randomUUID().replace(/-/g, "")}`
  return new Response(
    JSON.stringify({ error: { code: "invalid_argument", message: "Request body could not be read", requestId } }),
    { status: 400, headers: { "content-type": "application/json", "x-request-id": requestId, "access-control-allow-origin": "*" } }
  )
}

export const withBodyLimit = (handler: Handler): Handler => async (request) => {
  if (request.body === null) return handler(request)
  const declared = Number(request.headers.get("content-length") ?? "0")
  let body: Uint8Array | null
  try {
    body = declared > MAX_BODY_BYTES ? null : await readCapped(request.body, MAX_BODY_BYTES)
  } catch {
    return unreadable(request)
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
