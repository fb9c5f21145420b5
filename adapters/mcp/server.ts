/**
 * The MCP endpoint's protocol side (SPEC `POST /v1/mcp`): the official SDK's `Server` over its Web
 * Standard Streamable HTTP transport, stateless (no session id) with JSON answers, one pair per
 * request as the SDK requires in stateless mode. Authentication, rate limits, the request id and the
 * body bounds happen before this, in the HTTP platform (adapters/http); this serves the tools for
 * the caller the platform resolved.
 *
 * Why the SDK and not @effect/ai's McpServer (0.37): that one negotiates at most 2025-06-18 and
 * serves one toolkit for every client, with no place for a per-request caller; the SDK speaks
 * 2025-11-25 and 2025-06-18 and lets each request carry its own key and scopes.
 */
// Deno's type checker (deno test) does not resolve this package's wildcard subpath exports; tsc
// does, and checks these imports. Deno runs them fine: only its check is told to look away.
// @ts-ignore -- resolved by tsc, not by Deno's checker
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
// @ts-ignore -- resolved by tsc, not by Deno's checker
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
// @ts-ignore -- resolved by tsc, not by Deno's checker
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import type { Principal } from "../../core/auth/principal.ts"
import { type AnyTool, toolIndex } from "../../core/tools/tool.ts"
import { definitionOf, failure, runTool } from "./tools.ts"

const INSTRUCTIONS =
  "Switchboard: contacts, conversation threads, SMS/MMS, calls with an AI agent, phone numbers, US 10DLC texting registration and webhooks for one workspace. " +
  "Each tool needs the scope its description names; a failed call returns the REST API's error envelope ({error: {code, message}}). " +
  "Tools that send, call or buy take an optional idempotencyKey: reuse it when retrying."

/** The protocol revisions served; the first is the one offered to a client asking for another. */
export const PROTOCOL_VERSIONS: ReadonlyArray<string> = ["2025-11-25", "2025-06-18"]

export interface McpRequest {
  /** The request as the platform received it (method, URL, headers); its body is `body`. */
  readonly request: Request
  /** The JSON body, already read and bounded by the platform. */
  readonly body: unknown
  readonly principal: Principal
  readonly requestId: string
}

/** What the endpoint does with a message before the SDK sees it. */
export type Screened =
  | { readonly _tag: "Refused"; readonly message: string }
  | { readonly _tag: "Answered"; readonly answer: unknown }
  | { readonly _tag: "Pass"; readonly body: unknown }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The rules of our two revisions that the SDK, which also speaks older ones, does not enforce:
 * - one message per POST (batches were removed in 2025-06-18; the SDK would run up to 100 calls
 *   for one request, one rate-limit token);
 * - an `MCP-Protocol-Version` header names one of ours (400 otherwise, as the transport spec says);
 * - `initialize` asking for another revision is offered our latest (lifecycle: the server answers a
 *   version it supports), never an older one without `structuredContent`;
 * - `tools/call` arguments that are not an object are the caller's mistake, answered as a tool
 *   error a model can read rather than the SDK's internal error;
 * - malformed params of `initialize` and `tools/call` (and params that are not an object) are
 *   answered as invalid params (-32602), not the SDK's internal error.
 */
export const screen = (body: unknown, versionHeader: string | undefined, requestId: string): Screened => {
  if (Array.isArray(body)) {
    return {
      _tag: "Refused",
      message: "Send one JSON-RPC message per POST: batches are not part of MCP since 2025-06-18"
    }
  }
  if (versionHeader !== undefined && !PROTOCOL_VERSIONS.includes(versionHeader)) {
    return {
      _tag: "Refused",
      message: `Unsupported MCP-Protocol-Version ${versionHeader.slice(0, 40)}; this server speaks ${
        PROTOCOL_VERSIONS.join(" and ")
      }`
    }
  }
  if (!isRecord(body)) return { _tag: "Pass", body }
  // A notification (no id) gets no answer, even a refusal: the SDK acknowledges it.
  const invalid = body.id === undefined ? null : invalidParams(body)
  if (invalid !== null) {
    return {
      _tag: "Answered",
      answer: {
        jsonrpc: "2.0",
        id: idOf(body),
        error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${invalid}` }
      }
    }
  }
  if (!isRecord(body.params)) return { _tag: "Pass", body }
  const params = body.params
  if (body.method === "initialize" && !PROTOCOL_VERSIONS.includes(String(params.protocolVersion))) {
    return { _tag: "Pass", body: { ...body, params: { ...params, protocolVersion: PROTOCOL_VERSIONS[0] } } }
  }
  if (body.method === "tools/call" && params.arguments !== undefined && !isRecord(params.arguments)) {
    return {
      _tag: "Answered",
      answer: {
        jsonrpc: "2.0",
        id: idOf(body),
        result: failure("invalid_argument", "arguments: must be an object of the tool's named arguments", requestId)
      }
    }
  }
  return { _tag: "Pass", body }
}

const idOf = (
  message: Record<string, unknown>
) => (typeof message.id === "string" || typeof message.id === "number" ? message.id : null)

const isString = (u: unknown): u is string => typeof u === "string"

/**
 * What is wrong with the params of a request whose shape MCP fixes, or null. The SDK checks them
 * too, but answers a failed check as an internal error (-32603) holding its validation dump; a
 * caller's malformed params are JSON-RPC's invalid params (-32602), said in a line.
 */
const invalidParams = (message: Record<string, unknown>): string | null => {
  const params = message.params
  switch (message.method) {
    case "initialize": {
      if (!isRecord(params)) return "initialize takes params {protocolVersion, capabilities, clientInfo}"
      if (!isString(params.protocolVersion)) return "protocolVersion: a string is required"
      if (!isRecord(params.capabilities)) return "capabilities: an object is required"
      if (!isRecord(params.clientInfo) || !isString(params.clientInfo.name) || !isString(params.clientInfo.version)) {
        return "clientInfo: an object with string name and version is required"
      }
      return null
    }
    case "tools/call":
      if (!isRecord(params)) return "tools/call takes params {name, arguments}"
      return isString(params.name) ? null : "name: a string naming a tool is required"
    default:
      return params === undefined || isRecord(params) ? null : "params: must be an object"
  }
}

/** A JSON-RPC error a handler throws; the SDK answers it with this code and message as they are. */
const protocolError = (code: number, message: string) => Object.assign(new Error(message), { code })

/**
 * Builds the endpoint for a table of tools: their definitions are derived once, here (a table entry
 * whose Schemas are not objects fails at startup). `runtime` runs the tools' use cases. A key is
 * offered the tools its scopes allow; a tool it cannot use is still refused by name, with its scope.
 */
export const makeMcpEndpoint = (table: ReadonlyArray<AnyTool>, version: string) => {
  const listed = table.map((t) => ({ scope: t.scope, definition: definitionOf(t) }))
  const index = toolIndex(table)
  return (call: McpRequest, runtime: Runtime.Runtime<any>): Effect.Effect<Response> =>
    Effect.promise(async () => {
      const server = new Server({ name: "switchboard", version }, {
        capabilities: { tools: { listChanged: false } },
        instructions: INSTRUCTIONS
      })
      server.onerror = (error) =>
        Runtime.runFork(runtime)(
          Effect.logWarning("MCP protocol error", error.message).pipe(
            Effect.annotateLogs({ requestId: call.requestId })
          )
        )
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: listed.filter((t) => call.principal.scopes.has(t.scope)).map((t) => t.definition)
      }))
      server.setRequestHandler(
        CallToolRequestSchema,
        (req: { readonly params: { readonly name: string; readonly arguments?: unknown } }) => {
          const t = index.get(req.params.name)
          // An unknown tool is a protocol error (MCP "Tools", error handling), not a tool result.
          if (t === undefined) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`)
          return Runtime.runPromise(runtime)(runTool(t, call.principal, req.params.arguments ?? {}, call.requestId))
        }
      )
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
      await server.connect(transport)
      try {
        return await transport.handleRequest(call.request, { parsedBody: call.body })
      } finally {
        await server.close()
      }
    })
}
