/**
 * Post-processing of the generated OpenAPI document: every error response is described as the one
 * envelope the platform middleware actually sends (the built-in HttpApiDecodeError and tagged-error
 * shapes never reach a client), and every response documents the rate-limit and request-id headers.
 */
import type { ErrorCode } from "../../core/errors.ts"

const codes: Record<string, ErrorCode> = {
  "400": "invalid_argument",
  "401": "unauthenticated",
  "403": "permission_denied",
  "404": "not_found",
  "409": "failed_precondition",
  "429": "resource_exhausted",
  "500": "internal"
}

const descriptions: Record<string, string> = {
  "400": "Invalid argument: a parameter is missing or malformed, the body is not JSON or over 1 MiB, an unknown field, or a modified cursor",
  "401": "Missing, malformed, unknown or revoked key",
  "403": "The key lacks the scope; the message names it",
  "404": "No such resource in the workspace, or a malformed id",
  "409": "The workspace cannot do this yet; the message says why",
  "429": "Rate limit exceeded; retry after `Retry-After` seconds",
  "500": "Unexpected server error; the request id is logged"
}

const header = (description: string, type = "integer") => ({ description, schema: { type } })

const commonHeaders = {
  "X-Request-Id": header("The request id: the client's own when valid, else generated", "string"),
  "RateLimit-Limit": header("Requests allowed per minute for this key"),
  "RateLimit-Remaining": header("Requests left right now"),
  "RateLimit-Reset": header("Seconds (delta) until a full minute's allowance is back")
}

const errorResponse = (status: string) => ({
  description: descriptions[status] ?? "Error",
  headers: status === "429" ? { ...commonHeaders, "Retry-After": header("Seconds to wait before retrying") } : commonHeaders,
  content: {
    "application/json": {
      schema: { $ref: "#/components/schemas/ErrorEnvelope" },
      example: { error: { code: codes[status] ?? "internal", message: descriptions[status] ?? "Error", requestId: "req_2c9f1f3b7d0e4a8c" } }
    }
  }
})

export const patchOpenApi = (spec: Record<string, any>): Record<string, any> => {
  spec.components ??= {}
  spec.components.schemas ??= {}
  spec.components.schemas.ErrorEnvelope = {
    type: "object",
    required: ["error"],
    additionalProperties: false,
    properties: {
      error: {
        type: "object",
        required: ["code", "message", "requestId"],
        properties: {
          code: { type: "string", enum: Object.values(codes) },
          message: { type: "string" },
          requestId: { type: "string" }
        }
      }
    }
  }
  for (const name of Object.keys(spec.components.schemas)) {
    if (name === "HttpApiDecodeError" || name === "Issue" || ["InvalidArgument", "Unauthenticated", "PermissionDenied", "NotFound", "FailedPrecondition", "ResourceExhausted", "Internal"].includes(name)) {
      delete spec.components.schemas[name]
    }
  }
  for (const path of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const op of Object.values<Record<string, any>>(path)) {
      if (typeof op !== "object" || op === null || !("responses" in op)) continue
      const responses: Record<string, any> = op.responses
      const authenticated = Array.isArray(op.security) && op.security.length > 0
      const statuses = new Set(Object.keys(responses).filter((s) => Number(s) >= 400))
      for (const s of ["400", "500", ...(authenticated ? ["401", "429"] : [])]) statuses.add(s)
      for (const s of statuses) responses[s] = errorResponse(s)
      for (const [s, r] of Object.entries(responses)) {
        if (Number(s) < 400) r.headers = { ...commonHeaders, ...r.headers }
      }
    }
  }
  return spec
}
