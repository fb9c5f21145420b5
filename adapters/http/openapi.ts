/**
 * Post-processing of the generated OpenAPI document: every error response is described as the one
 * envelope the platform middleware actually sends (the built-in HttpApiDecodeError and tagged-error
 * shapes never reach a client), and every response documents the rate-limit and request-id headers.
 */
import { JSONSchema, Schema } from "effect"
import { type ErrorCode, errorStatus } from "../../core/errors.ts"
import { catalog, PING } from "../../core/events/catalog.ts"
import { InputBounds } from "../../core/input.ts"

/**
 * Status -> public code, from the one table in core/errors.ts; and the two statuses Node's HTTP
 * parser answers before any route (nodeServer.ts), which SPEC's table lacks.
 */
const codes: Record<string, ErrorCode> = {
  ...Object.fromEntries(Object.values(errorStatus).map(({ status, code }) => [String(status), code])),
  "405": "invalid_argument",
  "406": "invalid_argument",
  "408": "invalid_argument",
  "431": "invalid_argument"
}

const descriptions: Record<string, string> = {
  "400": `Invalid argument: a parameter is missing or malformed, the body is not JSON, over 1 MiB or beyond the input bounds (nested over ${InputBounds.depth} levels, over ${InputBounds.arrayItems} items in an array or ${InputBounds.objectKeys} keys in an object, over ${InputBounds.values} values in all, a string over ${InputBounds.stringLength} characters), a string holds NUL or a lone surrogate, an unknown field, or a modified cursor`,
  "401": "Missing, malformed, unknown or revoked key",
  "405": "The method is not offered here; `Allow` lists the one that is",
  "406": "The `Accept` header does not list what the operation answers",
  "408": "The request line, headers or body did not arrive within the server's timeouts (README, Configuration)",
  "431": "The request line and headers exceed 16 KB",
  "403": "The key lacks a scope the operation lists in its security requirement; the message names it. Checked before the body is read",
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
  headers:
    status === "429"
      ? { ...commonHeaders, "Retry-After": header("Seconds to wait before retrying") }
      : status === "401"
        ? { ...commonHeaders, "WWW-Authenticate": header("`Bearer`: the scheme to authenticate with", "string") }
        : commonHeaders,
  content: {
    "application/json": {
      schema: { $ref: "#/components/schemas/ErrorEnvelope" },
      example: { error: { code: codes[status] ?? "internal", message: descriptions[status] ?? "Error", requestId: "req_2c9f1f3b7d0e4a8c" } }
    }
  }
})

const signingHeaders = [
  { name: "webhook-id", in: "header", required: true, schema: { type: "string" }, description: "Event id (`evt_...`; test pings `evt_test_...`), the same on every retry" },
  { name: "webhook-timestamp", in: "header", required: true, schema: { type: "string" }, description: "Unix seconds of this attempt; reject if more than 5 minutes off" },
  { name: "webhook-signature", in: "header", required: true, schema: { type: "string" }, description: "`v1,<base64 HMAC-SHA256 of id.timestamp.body>`; two space-separated signatures during a secret rotation" }
]

/** OpenAPI 3.1 `webhooks`: one entry per catalog event (and `ping`), bodies generated from the catalog schemas. */
const webhooksSection = (components: Record<string, unknown>) => {
  const entries: Record<string, unknown> = {}
  const types: Array<[string, string, Schema.Schema.Any]> = [
    ...Object.entries(catalog).map(([type, e]) => [type, e.description, e.data] as [string, string, Schema.Schema.Any]),
    [PING, "Sent only by POST /webhooks/{id}/test; not subscribable", Schema.Struct({ message: Schema.String })]
  ]
  for (const [type, description, data] of types) {
    // Shared definitions (e.g. UUID) go to components.schemas so every $ref resolves in the document.
    const dataSchema = JSONSchema.fromAST(data.ast, {
      definitions: components as Record<string, JSONSchema.JsonSchema7>,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1"
    })
    entries[type] = {
      post: {
        summary: type,
        description: `${description}. Delivered at least once with Standard Webhooks signatures; retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h until a 2xx within 15 s; a 410 disables the endpoint.`,
        parameters: signingHeaders,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["type", "timestamp", "data"],
                properties: { type: { const: type }, timestamp: { type: "string", format: "date-time" }, data: dataSchema }
              }
            }
          }
        },
        responses: { "2XX": { description: "Received" }, "410": { description: "Gone: the endpoint is disabled" } }
      }
    }
  }
  return entries
}

export const patchOpenApi = (spec: Record<string, any>): Record<string, any> => {
  spec.components ??= {}
  spec.components.schemas ??= {}
  spec.webhooks = webhooksSection(spec.components.schemas)
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
          code: { type: "string", enum: [...new Set(Object.values(codes))] },
          message: { type: "string" },
          requestId: { type: "string" }
        }
      }
    }
  }
  for (const name of Object.keys(spec.components.schemas)) {
    if (name === "HttpApiDecodeError" || name === "Issue" || Object.hasOwn(errorStatus, name)) {
      delete spec.components.schemas[name]
    }
  }
  for (const path of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const op of Object.values<Record<string, any>>(path)) {
      if (typeof op !== "object" || op === null || !("responses" in op)) continue
      // A body that may be null may be left out: an empty body reads as null (nodeServer.ts, web.ts).
      const body = op.requestBody?.content?.["application/json"]?.schema
      if (Array.isArray(body?.anyOf) && body.anyOf.some((s: { type?: unknown }) => s.type === "null")) op.requestBody.required = false
      const responses: Record<string, any> = op.responses
      const authenticated = Array.isArray(op.security) && op.security.length > 0
      const statuses = new Set(Object.keys(responses).filter((s) => Number(s) >= 400))
      for (const s of ["400", "408", "431", "500", ...(authenticated ? ["401", "429"] : [])]) statuses.add(s)
      // The probes (api/health.ts) answer /readyz's 503 with its own body, and are not rate limited.
      const probe = op.tags?.includes("health") === true
      for (const s of statuses) if (!(probe && s === "503")) responses[s] = errorResponse(s)
      for (const [s, r] of Object.entries(responses)) {
        if (Number(s) < 400) r.headers = probe ? { "X-Request-Id": commonHeaders["X-Request-Id"], ...r.headers } : { ...commonHeaders, ...r.headers }
      }
    }
  }
  return spec
}
