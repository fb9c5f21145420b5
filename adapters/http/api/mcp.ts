/**
 * SPEC `POST /v1/mcp`: the Model Context Protocol over Streamable HTTP, with the same keys, scopes
 * and rate limits as the REST API (outside `/v1/api`). Served by handlers/mcp.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authorization, BoundedBody, RequiredScopes } from "../security.ts"
import { InvalidArgument, PermissionDenied } from "./errors.ts"

const JsonRpcId = Schema.Union(Schema.String, Schema.Number)

/** Any JSON object (MCP's own schema defines what goes inside). */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object" }
})

const JsonRpcMessage = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(JsonRpcId),
  method: Schema.String,
  params: Schema.optional(JsonObject)
}).annotations({
  identifier: "McpMessage",
  description: "One JSON-RPC 2.0 request or notification (no batches).",
  examples: [{
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "contacts_list", arguments: { q: "ada" } }
  }]
})

const JsonRpcAnswer = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(JsonRpcId),
  result: Schema.optional(JsonObject),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
}).annotations({
  identifier: "McpAnswer",
  description:
    "The JSON-RPC response to a request; a failed tool call is a result with `isError: true` whose text is the REST error envelope.",
  examples: [{
    jsonrpc: "2.0",
    id: 1,
    result: {
      content: [{ type: "text", text: "{\"contacts\":[],\"nextCursor\":null}" }],
      structuredContent: { contacts: [], nextCursor: null }
    }
  }]
})

/** An error status the MCP endpoint answers beyond the common ones (the OpenAPI patch documents it as the usual envelope). */
const status = (code: number) => HttpApiSchema.Empty(code)

const NO_STREAM =
  "`GET` and `DELETE` answer 405: this server offers no server-to-client stream and no sessions (stateless Streamable HTTP)."

export class McpGroup extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("call", "/v1/mcp")
      .setPayload(JsonRpcMessage)
      .addSuccess(JsonRpcAnswer)
      .addSuccess(
        HttpApiSchema.Empty(202).annotations({ description: "A notification or response was accepted; no body." })
      )
      .addError(InvalidArgument)
      .addError(PermissionDenied)
      .addError(status(406))
      .annotate(RequiredScopes, [])
      .annotate(
        OpenApi.Description,
        "Model Context Protocol (protocol versions 2025-11-25 and 2025-06-18), stateless Streamable HTTP with JSON answers: no `Mcp-Session-Id`. " +
          "The same API keys as the REST API: `401` without a valid key, before any JSON-RPC is read; every call counts against the key's rate limit. " +
          "Every REST capability is a tool (`tools/list`), named `<resource>_<action>` with the REST parameter names; each tool checks the scope its description names. " +
          "One JSON-RPC message per POST: a batch (array) is `400`. An `MCP-Protocol-Version` header other than `2025-11-25` or `2025-06-18`, or malformed JSON-RPC: `400`. " +
          "`tools/list` offers the tools the key's scopes allow. " +
          "The client must accept both `application/json` and `text/event-stream` (`406` otherwise). Here `403` means a browser `Origin` not listed in `MCP_ALLOWED_ORIGINS`. " +
          NO_STREAM
      )
  )
  .middleware(BoundedBody)
  .middleware(Authorization)
  .annotate(OpenApi.Title, "MCP")
  .annotate(
    OpenApi.Description,
    "Model Context Protocol endpoint: every REST capability as a tool for AI clients, with the same API keys."
  )
{}

/**
 * GET (a server stream) and DELETE (end a session): neither exists on a stateless server, so both
 * answer 405. Not operations: the document says so in POST's description instead.
 */
export class McpStreamGroup extends HttpApiGroup.make("mcpStream")
  .add(HttpApiEndpoint.get("stream", "/v1/mcp").addError(status(405)))
  .add(HttpApiEndpoint.del("end", "/v1/mcp").addError(status(405)))
  .annotate(OpenApi.Exclude, true)
{}
