/**
 * `POST /v1/mcp` (adapters/mcp/server.ts does the protocol). By the time this runs the platform has
 * authenticated the key, billed the rate limit, and read and bounded the body. This adds the checks
 * of the MCP transport spec that come before JSON-RPC (Origin, Accept), and answers every refusal,
 * the SDK's included, in the REST error envelope.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { InvalidArgument } from "../../../core/kernel/errors.ts"
import { tools } from "../../../core/tools/index.ts"
import type { ToolServices } from "../../../core/tools/index.ts"
import { makeMcpEndpoint, screen } from "../../mcp/server.ts"
import { Api, API_VERSION } from "../api.ts"
import { bodyReadMessage, CurrentPrincipal, CurrentRequest, envelope, originOf } from "../platform.ts"
import { group } from "../router.ts"

/** Both media types, as the Streamable HTTP transport requires of every POST. */
const acceptsBoth = (accept: string | undefined) =>
  accept !== undefined && /application\/json|\*\/\*/i.test(accept) && /text\/event-stream|\*\/\*/i.test(accept)

/** The SDK's refusals (malformed JSON-RPC, an unsupported protocol version) carry a JSON-RPC error; REST's envelope replaces it. */
const asEnvelope = async (res: Response, requestId: string) => {
  let message = `MCP request refused (${res.status})`
  try {
    const body = (await res.json()) as { error?: { message?: unknown } }
    if (typeof body.error?.message === "string") message = body.error.message
  } catch {
    // no JSON body: the generic message stands
  }
  return envelope(res.status, res.status === 403 ? "permission_denied" : "invalid_argument", message, requestId)
}

export const McpLive = (options: { readonly allowedOrigins: ReadonlyArray<string> }) => {
  const endpoint = makeMcpEndpoint(tools, API_VERSION)
  const allowed = new Set(options.allowedOrigins.map(originOf))
  return group(Api, "mcp", (handlers) =>
    handlers.handleRaw("call", ({ request }) =>
      Effect.gen(function*() {
        const { requestId } = yield* CurrentRequest
        const principal = yield* CurrentPrincipal
        // MCP transports: a server MUST validate Origin (DNS rebinding); browsers send it, other clients don't.
        const origin = request.headers["origin"]
        if (origin !== undefined && !allowed.has(originOf(origin))) {
          return envelope(
            403,
            "permission_denied",
            `Origin ${
              origin.slice(0, 200)
            } may not use the MCP endpoint; the operator lists allowed origins in MCP_ALLOWED_ORIGINS`,
            requestId
          )
        }
        if (!acceptsBoth(request.headers["accept"])) {
          return envelope(
            406,
            "invalid_argument",
            "Accept must list both application/json and text/event-stream (MCP Streamable HTTP)",
            requestId
          )
        }
        const raw = yield* Effect.mapError(request.json, (e) => new InvalidArgument({ message: bodyReadMessage(e) }))
        const screened = screen(raw, request.headers["mcp-protocol-version"], requestId)
        if (screened._tag === "Refused") return envelope(400, "invalid_argument", screened.message, requestId)
        if (screened._tag === "Answered") return HttpServerResponse.unsafeJson(screened.answer)
        // The SDK's transport insists on both media types literally; `acceptsBoth` also took `*/*`.
        const headers = new Headers({
          accept: "application/json, text/event-stream",
          "content-type": "application/json"
        })
        const version = request.headers["mcp-protocol-version"]
        if (version !== undefined) headers.set("mcp-protocol-version", version)
        const web = new Request("http://mcp.invalid/v1/mcp", { method: "POST", headers })
        const runtime = yield* Effect.runtime<ToolServices>()
        const res = yield* endpoint({ request: web, body: screened.body, principal, requestId }, runtime)
        return res.status >= 400
          ? yield* Effect.promise(() => asEnvelope(res, requestId))
          : HttpServerResponse.fromWeb(res)
      }), { uninterruptible: true }))
}

const notAllowed = Effect.flatMap(CurrentRequest, ({ requestId }) =>
  Effect.succeed(
    HttpServerResponse.setHeader(
      envelope(
        405,
        "invalid_argument",
        "The MCP endpoint is stateless: it offers no stream (GET) and no session to end (DELETE); POST JSON-RPC messages",
        requestId
      ),
      "allow",
      "POST"
    )
  ))

export const McpStreamLive = group(
  Api,
  "mcpStream",
  (handlers) => handlers.handleRaw("stream", () => notAllowed).handleRaw("end", () => notAllowed)
)
