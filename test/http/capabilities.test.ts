/**
 * Every public REST endpoint is tied to one tool of core/tools (`capability(tool)`, api/shared.ts)
 * and every tool to one endpoint; the tool takes the route's parameters by the same names, flat,
 * needs the scope the route requires, and takes an idempotency key where the route does.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Context, Option, SchemaAST as AST } from "effect"
import { describe, expect, it } from "vitest"
import { Api } from "../../adapters/http/api.ts"
import { Capability } from "../../adapters/http/api/shared.ts"
import { capabilityEndpoints } from "../../adapters/http/app.ts"
import { type ApiEndpoint, apiEndpoints } from "../../adapters/http/capabilities.ts"
import { RequiredScopes } from "../../adapters/http/security.ts"
import { type AnyTool, tools } from "../../core/tools/index.ts"

/** What is wrong with a set of endpoints against a tool table; empty when each is tied once. */
/** Keyed groups that are no capability of their own: the test helpers, and MCP, which serves the tools themselves. */
const UNTIED: ReadonlySet<string> = new Set(["testHelpers", "mcp"])

const problems = (endpoints: ReadonlyArray<ApiEndpoint>, names: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  const tied = new Map<string, number>()
  for (const e of endpoints) {
    const id = `${e.method} ${e.path}`
    if (e.tool === undefined) {
      if (e.authorized && !UNTIED.has(e.group)) out.push(`${id} offers no tool`)
      continue
    }
    if (!e.authorized || UNTIED.has(e.group)) out.push(`${id} is not a public capability but names ${e.tool}`)
    if (!names.includes(e.tool)) out.push(`${id} names ${e.tool}, not in the table`)
    tied.set(e.tool, (tied.get(e.tool) ?? 0) + 1)
  }
  for (const [tool, n] of tied) if (n > 1) out.push(`${tool} is tied to ${n} endpoints`)
  for (const name of names) if (!tied.has(name)) out.push(`${name} is tied to no endpoint`)
  return out
}

/** The field names of an object Schema (a struct, a refinement of one, or one or null). */
const fields = (ast: AST.AST): Array<string> => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.map((p) => String(p.name))
    case "Refinement":
      return fields(ast.from)
    case "Transformation":
      return fields(ast.to)
    case "Union":
      return ast.types.flatMap(fields)
    default:
      return []
  }
}

interface Route {
  readonly tool: string
  readonly parameters: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly idempotencyKey: boolean
}

const routes = (): Array<Route> => {
  const found: Array<Route> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const tool = Context.getOption(mergedAnnotations, Capability)
      if (Option.isNone(tool)) return
      const of = (schema: Option.Option<{ readonly ast: AST.AST }>): Array<string> =>
        Option.match(schema, { onNone: () => [], onSome: (s) => fields(s.ast) })
      found.push({
        tool: tool.value,
        parameters: [...of(endpoint.pathSchema), ...of(endpoint.urlParamsSchema), ...of(endpoint.payloadSchema)].sort(),
        scopes: Context.getOrElse(mergedAnnotations, RequiredScopes, () => []),
        idempotencyKey: of(endpoint.headersSchema).includes("idempotency-key")
      })
    }
  })
  return found
}

const byName = new Map<string, AnyTool>(tools.map((t) => [t.name, t]))

describe("the capability table and the REST API", () => {
  const names = tools.map((t) => t.name)

  it("ties every public endpoint (test helpers aside) to one tool of the table, and every tool to one endpoint", () => {
    expect(problems(apiEndpoints(), names)).toEqual([])
    expect(capabilityEndpoints()).toHaveLength(tools.length)
  })

  it("the check fails on an untied endpoint, an unknown tool, a tool tied twice and a tool tied to nothing", () => {
    const endpoints = apiEndpoints()
    const untied = endpoints.map((e) => (e.tool === "contacts_get" ? { ...e, tool: undefined } : e))
    expect(problems(untied, names)).toEqual([
      "GET /v1/api/contacts/:id offers no tool",
      "contacts_get is tied to no endpoint"
    ])
    const unknown = endpoints.map((e) => (e.tool === "contacts_get" ? { ...e, tool: "contacts_fetch" } : e))
    expect(problems(unknown, names)).toEqual([
      "GET /v1/api/contacts/:id names contacts_fetch, not in the table",
      "contacts_get is tied to no endpoint"
    ])
    const twice = endpoints.map((e) => (e.tool === "contacts_get" ? { ...e, tool: "contacts_list" } : e))
    expect(problems(twice, names)).toEqual([
      "contacts_list is tied to 2 endpoints",
      "contacts_get is tied to no endpoint"
    ])
    const helper = endpoints.map((
      e
    ) => (e.group === "testHelpers" && e.name === "otp" ? { ...e, tool: "messaging_status" } : e))
    expect(problems(helper, names)).toContain(
      "GET /v1/api/test-helpers/otp is not a public capability but names messaging_status"
    )
  })

  it("lists the endpoint of each tool by method and path", () => {
    expect(capabilityEndpoints()).toContainEqual({
      method: "PATCH",
      path: "/v1/api/contacts/:id",
      tool: "contacts_update"
    })
    expect(capabilityEndpoints()).toContainEqual({
      method: "POST",
      path: "/v1/api/numbers/:e164/connect",
      tool: "numbers_connect"
    })
    expect(capabilityEndpoints()).toContainEqual({
      method: "GET",
      path: "/v1/api/webhook-events",
      tool: "webhooks_event_types"
    })
  })

  it("each tool takes its route's path, query and body parameters by the same names, flat", () => {
    for (const r of routes()) {
      expect([...new Set(fields(byName.get(r.tool)!.input.ast))].sort(), r.tool).toEqual([...new Set(r.parameters)])
    }
  })

  it("each route requires exactly its tool's scope, and takes an Idempotency-Key exactly where the tool does", () => {
    for (const r of routes()) {
      const t = byName.get(r.tool)!
      expect(r.scopes, r.tool).toEqual([t.scope])
      expect(r.idempotencyKey, r.tool).toBe(t.idempotencyKey)
    }
    expect(tools.filter((t) => t.idempotencyKey).map((t) => t.name).sort()).toEqual([
      "broadcasts_create",
      "calls_place",
      "messages_send",
      "numbers_buy",
      "scheduled_messages_create"
    ])
  })

  it("the OpenAPI document names each operation's tool as x-mcp-tool, with the tool's scope as its security requirement", () => {
    const doc = OpenApi.fromApi(Api) as unknown as {
      paths: Record<string, Record<string, { "x-mcp-tool"?: string; security?: Array<Record<string, Array<string>>> }>>
    }
    const named = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op["x-mcp-tool"] === undefined ? [] : [op]))
    )
    expect(named.map((op) => op["x-mcp-tool"]).sort()).toEqual([...names].sort())
    for (const op of named) {
      expect(op.security, op["x-mcp-tool"]).toEqual([{ apiKey: [byName.get(op["x-mcp-tool"]!)!.scope] }])
    }
  })
})
