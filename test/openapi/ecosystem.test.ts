/**
 * Issue 20, item 9, and issue 44: the served OpenAPI document is taken cleanly by the tools clients
 * use. `redocly lint` (recommended rules, redocly.yaml) finds no error and no warning;
 * `openapi-typescript` generates types that compile with an `openapi-fetch` client, and that client
 * runs a flow against the app, sending `Idempotency-Key` by the name SPEC gives it.
 * Outside test/http so the Deno run (deno.json) does not spawn Node tools.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import openapiTS, { astToString } from "openapi-typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, makeTestApp } from "../support/app.ts"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "../..")
const bin = (name: string) => join(root, "node_modules/.bin", name)

let app: Awaited<ReturnType<typeof makeTestApp>>
let dir: string
let docFile: string
beforeAll(async () => {
  app = await makeTestApp()
  dir = await mkdtemp(join(tmpdir(), "switchboard-openapi-"))
  // The generated client resolves openapi-fetch (and tsc its types) from the repository's packages.
  await symlink(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  docFile = join(dir, "openapi.json")
  await writeFile(docFile, await (await app.fetch("/v1/api/openapi.json")).text())
})
afterAll(async () => {
  await app.close()
  await rm(dir, { recursive: true, force: true })
})

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number }
  readonly problems: ReadonlyArray<
    {
      readonly ruleId: string
      readonly severity: string
      readonly message: string
      readonly location: ReadonlyArray<{ readonly pointer: string }>
    }
  >
}

const lint = async (file: string): Promise<LintReport> => {
  // Exit code 1 when there are errors; the JSON report is on stdout either way.
  const out = await run(bin("redocly"), ["lint", file, "--format=json", `--config=${join(root, "redocly.yaml")}`], {
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    maxBuffer: 64 * 1024 * 1024
  }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? "" }))
  return JSON.parse(out.stdout) as LintReport
}

describe("redocly lint (recommended rules)", () => {
  it("reports 0 errors and 0 warnings on the served document", { timeout: 60_000 }, async () => {
    const report = await lint(docFile)
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
    expect(problems).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })

  it("does report errors in a document without servers or summaries", { timeout: 60_000 }, async () => {
    const file = join(dir, "bare.json")
    const op = { operationId: "contacts.list", security: [], responses: { "200": { description: "Success" } } }
    await writeFile(
      file,
      JSON.stringify({ openapi: "3.1.0", info: { title: "Bare", version: "1" }, paths: { "/contacts": { get: op } } })
    )
    const rules = (await lint(file)).problems.filter((p) => p.severity === "error").map((p) => p.ruleId)
    expect(rules).toContain("no-empty-servers")
    expect(rules).toContain("operation-summary")
    const warnings = (await lint(file)).problems.filter((p) => p.severity === "warn").map((p) => p.ruleId)
    expect(warnings).toContain("info-license")
  })
})

/**
 * The client program, compiled by tsc against the generated types and then run. The
 * `@ts-expect-error` lines fail the compile if the types stop saying what they should (an unused
 * directive is an error): `limit` is a number, bodies and paths are checked.
 */
const program = `
import createClient from "openapi-fetch"
import type { components, paths } from "./schema.ts"

type Fetch = (request: Request) => Promise<Response>

export const flow = async (fetch: Fetch, adminToken: string, e164: string) => {
  const admin = createClient<paths>({ baseUrl: "http://test.local", fetch, headers: { authorization: \`Bearer \${adminToken}\` } })
  const ws = await admin.POST("/v1/admin/workspaces", { body: { name: "Generated client" } })
  if (ws.data === undefined) throw new Error(JSON.stringify(ws.error))
  const workspaceId: string = ws.data.workspace.id
  const key = await admin.POST("/v1/admin/workspaces/{id}/keys", { params: { path: { id: workspaceId } }, body: { kind: "test" } })
  if (key.data === undefined) throw new Error(JSON.stringify(key.error))
  const number = await admin.POST("/v1/admin/workspaces/{id}/numbers", { params: { path: { id: workspaceId } }, body: { e164 } })
  if (number.error !== undefined) throw new Error(JSON.stringify(number.error))

  const api = createClient<paths>({ baseUrl: "http://test.local", fetch, headers: { authorization: \`Bearer \${key.data.key.token}\` } })
  const created = await api.POST("/v1/api/contacts", { body: { firstName: "Ada", lastName: "Lovelace", phone: "+14155550123", tags: ["vip"] } })
  if (created.data === undefined) throw new Error(JSON.stringify(created.error))
  const contact: components["schemas"]["Contact"] = created.data.contact

  const limit: number = 10
  const listed = await api.GET("/v1/api/contacts", { params: { query: { limit } } })
  // @ts-expect-error limit is an integer, not the string that carries it in the query
  await api.GET("/v1/api/contacts", { params: { query: { limit: "10" } } })
  if (listed.data === undefined) throw new Error(JSON.stringify(listed.error))
  const nextCursor: string | null = listed.data.nextCursor

  const got = await api.GET("/v1/api/contacts/{id}", { params: { path: { id: contact.id } } })
  if (got.data === undefined) throw new Error(JSON.stringify(got.error))
  // @ts-expect-error no such field on a contact
  got.data.contact.nickname

  const missing = await api.GET("/v1/api/contacts/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } })
  const notFound: string | undefined = missing.error?.error.code

  const message = { to: contact.phones[0]!.value, body: "Your table is ready" }
  const sent = await api.POST("/v1/api/messages", { params: { header: { "Idempotency-Key": "table-ready-1" } }, body: message })
  if (sent.data === undefined) throw new Error(JSON.stringify(sent.error))
  const again = await api.POST("/v1/api/messages", { params: { header: { "Idempotency-Key": "table-ready-1" } }, body: message })
  if (again.data === undefined) throw new Error(JSON.stringify(again.error))
  // @ts-expect-error the header's name is Idempotency-Key, as SPEC writes it
  await api.POST("/v1/api/messages", { params: { header: { "idempotency-key": "table-ready-2" } }, body: message })
  // @ts-expect-error a message needs a body
  await api.POST("/v1/api/messages", { body: { to: "+14155550123" } })

  const thread = await api.GET("/v1/api/conversations/{id}", { params: { path: { id: sent.data.conversationId } } })
  if (thread.data === undefined) throw new Error(JSON.stringify(thread.error))
  return {
    listedIds: listed.data.contacts.map((c) => c.id),
    nextCursor,
    contactId: contact.id,
    gotName: got.data.contact.firstName,
    notFound,
    simulated: sent.data.simulated,
    replayed: again.response.headers.get("Idempotency-Replayed"),
    sameMessage: again.data.message.id === sent.data.message.id,
    threadBodies: thread.data.activities.map((a) => a.body)
  }
}
`

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "Bundler",
    lib: ["ES2022", "DOM"],
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true
  },
  files: ["flow.ts"]
}

describe("a client generated by openapi-typescript, with openapi-fetch", () => {
  it("compiles, and runs a flow against the app", { timeout: 60_000 }, async () => {
    await writeFile(
      join(dir, "schema.ts"),
      astToString(await openapiTS(JSON.parse(await (await app.fetch("/v1/api/openapi.json")).text())))
    )
    await writeFile(join(dir, "flow.ts"), program)
    await writeFile(join(dir, "tsconfig.json"), JSON.stringify(tsconfig))
    const compiled = await run(bin("tsc"), ["-p", join(dir, "tsconfig.json")]).then(
      () => "",
      (e: { stdout?: string }) => e.stdout ?? String(e)
    )
    expect(compiled).toBe("")

    const { flow } = (await import(pathToFileURL(join(dir, "flow.ts")).href)) as {
      flow: (
        fetch: (r: Request) => Promise<Response>,
        adminToken: string,
        e164: string
      ) => Promise<Record<string, unknown>>
    }
    const viaApp = async (request: Request) => {
      const url = new URL(request.url)
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.text()
      return app.fetch(url.pathname + url.search, {
        method: request.method,
        headers: request.headers,
        ...(body === undefined ? {} : { body })
      })
    }
    const result = await flow(viaApp, ADMIN_TOKEN, "+14155550188")
    expect(result.listedIds).toEqual([result.contactId])
    expect(result.nextCursor).toBeNull()
    expect(result.gotName).toBe("Ada")
    expect(result.notFound).toBe("not_found")
    expect(result.simulated).toBe(true)
    expect(result.replayed).toBe("true")
    expect(result.sameMessage).toBe(true)
    expect(result.threadBodies).toContain("Your table is ready")
  })
})
