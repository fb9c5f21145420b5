/**
 * MCP requests whose params break the shape MCP fixes are JSON-RPC invalid params (-32602) with a
 * one-line message, never the SDK's internal error (-32603) with its validation dump.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { bearer } from "./helpers.ts"

let app: Awaited<ReturnType<typeof makeTestApp>>
let key = ""
beforeAll(async () => {
  app = await makeTestApp()
  ;({ key } = await app.createWorkspace("MCP"))
})
afterAll(() => app.close())

const post = async (body: unknown) => {
  const res = await app.fetch("/v1/mcp", {
    method: "POST",
    headers: { ...bearer(key), accept: "application/json, text/event-stream" },
    json: body
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { id: unknown; error?: { code: number; message: string }; result?: unknown }
}

const clientInfo = { name: "test", version: "1" }

describe("MCP params", () => {
  it.each([
    [
      "tools/call without a name",
      { method: "tools/call", params: { arguments: {} } },
      "Invalid params: name: a string naming a tool is required"
    ],
    [
      "tools/call with a numeric name",
      { method: "tools/call", params: { name: 7 } },
      "Invalid params: name: a string naming a tool is required"
    ],
    [
      "tools/call without params",
      { method: "tools/call" },
      "Invalid params: tools/call takes params {name, arguments}"
    ],
    [
      "initialize without params",
      { method: "initialize" },
      "Invalid params: initialize takes params {protocolVersion, capabilities, clientInfo}"
    ],
    ["initialize without clientInfo", {
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} }
    }, "Invalid params: clientInfo: an object with string name and version is required"],
    ["initialize with a numeric version", {
      method: "initialize",
      params: { protocolVersion: 1, capabilities: {}, clientInfo }
    }, "Invalid params: protocolVersion: a string is required"],
    [
      "tools/list with params that are not an object",
      { method: "tools/list", params: [1] },
      "Invalid params: params: must be an object"
    ]
  ])("%s: -32602 with a one-line message", async (_, message, expected) => {
    const body = await post({ jsonrpc: "2.0", id: 3, ...message })
    expect(body).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: expected } })
  })

  // MCP's transport: a notification the server cannot accept is an HTTP error status, not a JSON-RPC answer with an id.
  it("a notification (no id) with malformed params is refused with 400, never answered as a request", async () => {
    const res = await app.fetch("/v1/mcp", {
      method: "POST",
      headers: { ...bearer(key), accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", method: "notifications/initialized", params: [1] }
    })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { id?: unknown; error?: { code: number } }
    expect(body.id ?? null).toBeNull()
    expect(body.error?.code).not.toBe(-32603)
  })

  it("well-formed requests still reach the SDK", async () => {
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
    })
    expect(init.result).toMatchObject({ protocolVersion: "2025-11-25" })
    const listed = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    expect((listed.result as { tools: Array<unknown> }).tools.length).toBeGreaterThan(30)
  })
})
