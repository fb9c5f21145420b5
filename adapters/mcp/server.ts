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
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import type { Principal } from "../../core/auth/principal.ts"
import type { AnyTool } from "../../core/tools/tool.ts"
import { definitionOf, runTool, toolIndex } from "./tools.ts"

const INSTRUCTIONS =
  "Switchboard: contacts, conversation threads, SMS/MMS, calls with an AI agent, phone numbers, US 10DLC texting registration and webhooks for one workspace. " +
  "Each tool needs the scope its description names; a failed call returns the REST API's error envelope ({error: {code, message}}). " +
  "Tools that send, call or buy take an optional idempotencyKey: reuse it when retrying."

export interface McpRequest {
  /** The request as the platform received it (method, URL, headers); its body is `body`. */
  readonly request: Request
  /** The JSON body, already read and bounded by the platform. */
  readonly body: unknown
  readonly principal: Principal
  readonly requestId: string
}

/**
 * Builds the endpoint for a table of tools: their definitions are derived once, here (a table entry
 * whose Schemas are not objects fails at startup). `runtime` runs the tools' use cases.
 */
export const makeMcpEndpoint = (table: ReadonlyArray<AnyTool>, version: string) => {
  const definitions = table.map(definitionOf)
  const index = toolIndex(table)
  return (call: McpRequest, runtime: Runtime.Runtime<any>): Effect.Effect<Response> =>
    Effect.promise(async () => {
      const server = new Server({ name: "switchboard", version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS })
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions }))
      server.setRequestHandler(CallToolRequestSchema, (req) => {
        const t = index.get(req.params.name)
        // An unknown tool is a protocol error (MCP "Tools", error handling), not a tool result.
        if (t === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`)
        return Runtime.runPromise(runtime)(runTool(t, call.principal, req.params.arguments ?? {}, call.requestId))
      })
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
      await server.connect(transport)
      try {
        return await transport.handleRequest(call.request, { parsedBody: call.body })
      } finally {
        await server.close()
      }
    })
}
