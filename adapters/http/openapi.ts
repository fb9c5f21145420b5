/**
 * Post-processing of the generated OpenAPI document: every error response is described as the one
 * envelope the platform middleware actually sends (the built-in HttpApiDecodeError and tagged-error
 * shapes never reach a client), and every response documents the rate-limit and request-id headers.
 * And what client generators and linters expect (`redocly lint` with redocly.yaml, test/openapi):
 * `servers`, a summary per operation and webhook, one described tag per title, written field
 * descriptions in place of Effect's automatic ones, and no unused components.
 */
import { JSONSchema, Schema } from "effect"
import { catalog, PING } from "../../core/events/catalog.ts"
import { type ErrorCode, errorStatus } from "../../core/kernel/errors.ts"
import { InputBounds } from "../../core/kernel/input.ts"
import { describeFields } from "../schemaText.ts"

/**
 * Status -> public code, from the one table in core/kernel/errors.ts; and the two statuses Node's HTTP
 * parser answers before any route (nodeServer.ts), which SPEC's table lacks.
 */
const codes: Record<string, ErrorCode> = {
  ...Object.fromEntries(Object.values(errorStatus).map(({ status, code }) => [String(status), code])),
  "405": "invalid_argument",
  "406": "invalid_argument",
  "408": "invalid_argument",
  "431": "invalid_argument",
  "503": "unavailable"
}

const descriptions: Record<string, string> = {
  "400":
    `Invalid argument: a parameter is missing or malformed, the body is not JSON, over 1 MiB or beyond the input bounds (nested over ${InputBounds.depth} levels, over ${InputBounds.arrayItems} items in an array or ${InputBounds.objectKeys} keys in an object, over ${InputBounds.values} values in all, a string over ${InputBounds.stringLength} characters), a string holds NUL or a lone surrogate, an unknown field, or a modified cursor`,
  "401": "Missing, malformed, unknown or revoked key",
  "405": "The method is not offered here; `Allow` lists the one that is",
  "406": "The `Accept` header does not list what the operation answers",
  "408": "The request line, headers or body did not arrive within the server's timeouts (docs/configuration.md)",
  "431": "The request line and headers exceed 16 KB",
  "403":
    "The key lacks a scope the operation lists in its security requirement; the message names it. Checked before the body is read",
  "404": "No such resource in the workspace, or a malformed id",
  "409": "The workspace cannot do this yet; the message says why",
  "429": "Rate limit exceeded; retry after `Retry-After` seconds",
  "500": "Unexpected server error; the request id is logged",
  "503":
    "The database is unavailable for a moment (a restart or failover) or a statement ran past its time limit; retry after `Retry-After` seconds"
}

const header = (description: string, type = "integer") => ({ description, schema: { type } })

const commonHeaders = {
  "X-Request-Id": header("The request id: the client's own when valid, else generated", "string"),
  "RateLimit-Limit": header("Tokens per minute for this key: a request takes one, plus one per whole 16 KiB of body"),
  "RateLimit-Remaining": header("Tokens left right now"),
  "RateLimit-Reset": header("Seconds (delta) until a full minute's allowance is back")
}

const replayedHeader = header(
  "`true` when this answer is the stored answer to an earlier request with the same `Idempotency-Key`",
  "string"
)

/** `idempotency-key` -> `Idempotency-Key`. */
const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())

const errorResponse = (status: string) => ({
  description: descriptions[status] ?? "Error",
  headers: status === "429" || status === "503"
    ? { ...commonHeaders, "Retry-After": header("Seconds to wait before retrying") }
    : status === "401"
    ? { ...commonHeaders, "WWW-Authenticate": header("`Bearer`: the scheme to authenticate with", "string") }
    : commonHeaders,
  content: {
    "application/json": {
      schema: { $ref: "#/components/schemas/ErrorEnvelope" },
      example: {
        error: {
          code: codes[status] ?? "internal",
          message: descriptions[status] ?? "Error",
          requestId: "req_2c9f1f3b7d0e4a8c"
        }
      }
    }
  }
})

const signingHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "Event id (`evt_...`; test pings `evt_test_...`), the same on every retry"
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "Unix seconds of this attempt; reject if more than 5 minutes off"
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    schema: { type: "string" },
    description:
      "`v1,<base64 HMAC-SHA256 of id.timestamp.body>`; two space-separated signatures during a secret rotation"
  }
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
        operationId: `webhook.${type}`,
        summary: `${type}: ${description.split(";")[0]}`,
        description:
          `${description}. Delivered at least once with Standard Webhooks signatures; retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h until a 2xx within 15 s; a 410 disables the endpoint.`,
        parameters: signingHeaders,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["type", "timestamp", "data"],
                properties: {
                  type: { const: type },
                  timestamp: { type: "string", format: "date-time" },
                  data: dataSchema
                }
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

/** A short title per operation that offers no tool (by HttpApi's `group.endpoint` operationId); a capability's is its tool's title (api/shared.ts). */
const summaries: Record<string, string> = {
  "testHelpers.inboundMessage": "Simulate an inbound message",
  "testHelpers.inboundCall": "Simulate an inbound call",
  "testHelpers.deliveryStatus": "Simulate a delivery status report",
  "testHelpers.registry": "Set the simulated registry's next review",
  "testHelpers.otp": "Read the last simulated PIN",
  "testHelpers.clock": "Advance the workspace's test clock",
  "mcp.call": "Send an MCP JSON-RPC message",
  "media.get": "Download message media",
  "carrier.callback": "Receive the carrier's webhooks",
  "payments.webhook": "Receive the payment provider's webhooks",
  "admin.listWorkspaces": "List workspaces",
  "admin.createWorkspace": "Create a workspace",
  "admin.getWorkspace": "Get a workspace",
  "admin.updateWorkspace": "Update a workspace",
  "admin.createKey": "Create an API key",
  "admin.listKeys": "List a workspace's API keys",
  "admin.getKey": "Get an API key",
  "admin.revokeKey": "Revoke an API key",
  "admin.createMember": "Add a member to a workspace",
  "admin.listMembers": "List a workspace's members",
  "admin.updateMember": "Update a member",
  "admin.removeMember": "Remove a member",
  "admin.listNumbers": "List a workspace's numbers",
  "admin.removeNumber": "Remove a seeded number",
  "admin.addNumber": "Seed a number into a workspace",
  "admin.ledger": "List a workspace's ledger charges",
  "admin.invoices": "List a workspace's monthly invoices",
  "admin.payInvoice": "Charge a failed invoice again",
  "admin.setupPaymentMethod": "Open a card setup page for a workspace",
  "admin.auditLog": "Read a workspace's audit log",
  "admin.mail": "Read a workspace's outgoing mail",
  "app.signIn": "Mail a console sign-in link",
  "app.me": "Who is signed in",
  "app.switchWorkspace": "Act in another workspace",
  "app.signOut": "Sign out of the console",
  "app.listTools": "List the member's capabilities",
  "app.callTool": "Run a capability as the member",
  "app.events": "Follow the workspace's events"
}

/** Tags are per group; groups that share a title (MCP's POST and its refused GET/DELETE) share one tag. */
const mergeTags = (tags: ReadonlyArray<{ readonly name: string; readonly description?: string }>) => {
  const byName = new Map<string, { name: string; description?: string | undefined }>()
  for (const tag of tags) {
    byName.set(tag.name, { name: tag.name, description: byName.get(tag.name)?.description ?? tag.description })
  }
  return [...byName.values()]
}

/** Drops component schemas nothing refers to (e.g. Effect's `PropertyKey` for record keys). */
const pruneComponents = (spec: Record<string, any>) => {
  for (;;) {
    const text = JSON.stringify({ ...spec, components: { ...spec.components, schemas: undefined } }) +
      JSON.stringify(spec.components.schemas)
    const unused = Object.keys(spec.components.schemas).filter((name) =>
      !text.includes(`"#/components/schemas/${name}"`)
    )
    if (unused.length === 0) return
    for (const name of unused) delete spec.components.schemas[name]
  }
}

export const patchOpenApi = (spec: Record<string, any>): Record<string, any> => {
  spec.servers ??= [
    {
      url: "/",
      description:
        "The server that serves this document. Use your deployment's base URL, e.g. `http://localhost:8080` for `npm start` with the default `PORT`"
    }
  ]
  // The project's license (LICENSE), by its SPDX identifier.
  spec.info.license = { name: "MIT", identifier: "MIT" }
  spec.components ??= {}
  spec.components.schemas ??= {}
  spec.webhooks = webhooksSection(spec.components.schemas)
  spec.tags = mergeTags(spec.tags ?? [])
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
      op.summary ??= summaries[op.operationId]
      // Header schemas are declared lower-case, as requests arrive; clients are generated from these
      // names (openapi-typescript types the key as written), so they are written as SPEC writes them.
      for (const p of op.parameters ?? []) if (p.in === "header") p.name = headerName(p.name)
      const idempotent = (op.parameters ?? []).some((p: { name: string }) => p.name === "Idempotency-Key")
      // A body that may be null may be left out: an empty body reads as null (nodeServer.ts, web.ts).
      const body = op.requestBody?.content?.["application/json"]?.schema
      if (Array.isArray(body?.anyOf) && body.anyOf.some((s: { type?: unknown }) => s.type === "null")) {
        op.requestBody.required = false
      }
      const responses: Record<string, any> = op.responses
      const authenticated = Array.isArray(op.security) && op.security.length > 0
      const statuses = new Set(Object.keys(responses).filter((s) => Number(s) >= 400))
      for (const s of ["400", "408", "431", "500", "503", ...(authenticated ? ["401", "429"] : [])]) statuses.add(s)
      // The probes (api/health.ts) answer /readyz's 503 with its own body, and are not rate limited.
      const probe = op.tags?.includes("health") === true
      for (const s of statuses) {
        if (probe && s === "503") continue
        responses[s] = errorResponse(s)
      }
      for (const [s, r] of Object.entries(responses)) {
        if (Number(s) < 400) {
          r.headers = probe
            ? { "X-Request-Id": commonHeaders["X-Request-Id"], ...r.headers }
            : { ...commonHeaders, ...(idempotent ? { "Idempotency-Replayed": replayedHeader } : {}), ...r.headers }
        }
      }
    }
  }
  describeFields(spec)
  pruneComponents(spec)
  return spec
}
