/**
 * Issue 44: MCP clients show a tool's fields by their JSON Schema title and description. Listed
 * through the official MCP SDK client, no schema carries a title Effect generates for a
 * refinement ("maxLength(200)", "between(1, 200)", "int") or its generic description ("a string at
 * most 200 character(s) long"), and every input field has a title or a description.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { automaticTitle } from "../../adapters/schemaText.ts"
import { tools as capabilities } from "../../core/tools/index.ts"
import { makeTestApp } from "../support/app.ts"
import { bearer } from "./helpers.ts"

let app: Awaited<ReturnType<typeof makeTestApp>>
let client: Client
beforeAll(async () => {
  app = await makeTestApp()
  const { key } = await app.createWorkspace("MCP schemas")
  client = new Client({ name: "schemas-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://test.local/v1/mcp"), {
      requestInit: { headers: bearer(key) },
      fetch: (url, init) => app.fetch(new URL(url).pathname, init)
    })
  )
})
afterAll(async () => {
  await client.close()
  await app.close()
})

/** Every `title` and `description` anywhere in a schema, with its JSON pointer. */
const texts = (node: unknown, at = ""): Array<{ at: string; key: string; text: string }> => {
  if (node === null || typeof node !== "object") return []
  return Object.entries(node).flatMap(([key, value]) => [
    ...((key === "title" || key === "description") && typeof value === "string" ? [{ at, key, text: value }] : []),
    ...texts(value, `${at}/${key}`)
  ])
}

const generated = /character\(s\)|item\(s\)|^a string matching the pattern|^an integer$|^a number between/

describe("MCP tool schemas", () => {
  it("carry no generated refinement titles or descriptions, and a title or description on every input field", async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(capabilities.map((t) => t.name).sort())
    const leaked: Array<string> = []
    const bare: Array<string> = []
    for (const tool of tools) {
      for (const [kind, schema] of [["input", tool.inputSchema], ["output", tool.outputSchema]] as const) {
        for (const { at, key, text } of texts(schema)) {
          if ((key === "title" && automaticTitle.test(text)) || (key === "description" && generated.test(text))) {
            leaked.push(`${tool.name} ${kind}${at} ${key}: ${text}`)
          }
        }
      }
      for (const [name, property] of Object.entries<Record<string, unknown>>(tool.inputSchema.properties as never)) {
        if (typeof property.title !== "string" && typeof property.description !== "string") {
          bare.push(`${tool.name}.${name}`)
        }
      }
    }
    expect(leaked).toEqual([])
    expect(bare).toEqual([])
    // The pattern does recognise what Effect writes, and the texts written by hand survive.
    expect(["maxLength(200)", "between(1, 200)", "int"].every((t) => automaticTitle.test(t))).toBe(true)
    const list = tools.find((t) => t.name === "contacts_list")!.inputSchema.properties as Record<string, any>
    expect(list.q.description).toMatch(/names, company/)
    expect(list.q.maxLength).toBe(200)
    expect(list.limit).toMatchObject({ description: "Items per page", minimum: 1, maximum: 200 })
    const create = tools.find((t) => t.name === "contacts_create")!.inputSchema.properties as Record<string, any>
    expect(create.firstName.title).toBe("First name")
    expect(create.phone.description).toMatch(/E\.164/)
  })
})
