/** SPEC "Versioning" and "Conventions: Spec": the served OpenAPI 3.1 document. */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../core/auth/scopes.ts"
import { makeTestApp } from "../support/app.ts"
import { expectRateHeaders } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
let doc: any
let res: Response
beforeAll(async () => {
  app = await makeTestApp()
  res = await app.fetch("/v1/api/openapi.json")
  doc = await res.clone().json()
})
afterAll(() => app.close())

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
const operations = (): Array<[string, string, any]> =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([m]) => methods.includes(m))
      .map(([m, op]): [string, string, any] => [m.toUpperCase(), path, op])
  )

const ENVELOPE = "#/components/schemas/ErrorEnvelope"

describe("GET /v1/api/openapi.json", () => {
  it("is served without authentication as JSON, with the tracing headers", async () => {
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expectRateHeaders(res)
  })

  it("is OpenAPI 3.1 with the contract version", () => {
    expect(doc.openapi).toMatch(/^3\.1/)
    expect(doc.info.version).toBe("2026-08-17")
    expect(typeof doc.info.title).toBe("string")
  })

  it("validates against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator), refs resolving", async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toMatch(/^3\.1/)
    expect(() => validator.resolveRefs()).not.toThrow()
  })

  it("is checked by a validator that does reject broken documents", async () => {
    const broken = structuredClone(doc)
    delete broken.info
    broken.paths["/v1/api/contacts"].get.responses = "nope"
    expect((await new Validator().validate(broken)).valid).toBe(false)
  })

  it("has every $ref pointing at a defined component", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\//)
      expect(doc.components.schemas[ref.slice("#/components/schemas/".length)], ref).toBeDefined()
    }
  })

  it("never mentions the framework's internal error shapes", () => {
    const text = JSON.stringify(doc)
    expect(text).not.toContain("HttpApiDecodeError")
    expect(text).not.toMatch(
      /"#\/components\/schemas\/(Issue|InvalidArgument|Unauthenticated|PermissionDenied|NotFound|FailedPrecondition|ResourceExhausted|Internal)"/
    )
  })

  it("describes the error envelope exactly", () => {
    const envelope = doc.components.schemas.ErrorEnvelope
    expect(envelope.required).toEqual(["error"])
    expect(envelope.properties.error.required.sort()).toEqual(["code", "message", "requestId"])
    expect(envelope.properties.error.properties.code.enum.sort()).toEqual(
      [
        "failed_precondition",
        "internal",
        "invalid_argument",
        "not_found",
        "permission_denied",
        "resource_exhausted",
        "unauthenticated",
        "unavailable"
      ]
    )
  })

  it("gives every operation 400, 500 and 503, and authenticated ones 401 and 429, all as the envelope", () => {
    const ops = operations()
    expect(ops.length).toBeGreaterThan(0)
    for (const [method, path, op] of ops) {
      const label = `${method} ${path}`
      const authenticated = Array.isArray(op.security) && op.security.length > 0
      // The probes answer their own 503 (/readyz) or none (/healthz reads no database).
      const probe = op.tags?.includes("health") === true
      const required = ["400", "500", ...(probe ? [] : ["503"]), ...(authenticated ? ["401", "429"] : [])]
      for (const status of required) expect(op.responses[status], `${label} ${status}`).toBeDefined()
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue
        // The readiness probe's 503 names its failed checks in its own body (api/health.ts).
        if (label === "GET /readyz" && status === "503") continue
        expect(response.content["application/json"].schema, `${label} ${status}`).toEqual({ $ref: ENVELOPE })
      }
      if (authenticated) expect(op.responses["429"].headers["Retry-After"], label).toBeDefined()
      if (!probe) expect(op.responses["503"].headers["Retry-After"], label).toBeDefined()
    }
  })

  it("marks every public route as authenticated with a bearer key, listing the scopes it needs", () => {
    const schemes = doc.components.securitySchemes
    const scopes = new Set<string>(allScopes)
    for (const [method, path, op] of operations()) {
      // SPEC: every endpoint but the document itself needs a key.
      if (!path.startsWith("/v1/api/") || path === "/v1/api/openapi.json") continue
      expect(op.security, `${method} ${path}`).toHaveLength(1)
      const required: Array<string> = op.security[0].apiKey
      expect(required.length, `${method} ${path}`).toBeGreaterThan(0)
      for (const scope of required) {
        expect(scopes.has(scope), `${method} ${path}: ${scope}`).toBe(true)
        expect(op.description, `${method} ${path}`).toContain(`\`${scope}\``)
      }
    }
    expect(doc.paths["/v1/api/contacts"].post.security).toEqual([{ apiKey: ["contacts:write"] }])
    expect(doc.paths["/v1/api/test-helpers/inbound-messages"].post.security).toEqual([{
      apiKey: ["messages:send", "conversations:write"]
    }])
    expect(schemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" })
    expect(doc.paths["/v1/api/openapi.json"].get.security).toEqual([])
  })

  it("lists itself, and leaves out the reference page that renders it", () => {
    const self = doc.paths["/v1/api/openapi.json"].get
    expect(self.operationId).toBe("reference.openapi")
    expect(self.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/OpenApiDocument"
    })
    expect(Object.keys(doc.paths).filter((path) => path.startsWith("/docs"))).toEqual([])
  })

  it("names request headers as SPEC writes them, and documents the replay header of an idempotent route", () => {
    const params = doc.paths["/v1/api/messages"].post.parameters as Array<any>
    const key = params.find((p) => p.in === "header")
    expect(key.name).toBe("Idempotency-Key")
    expect(key.description).toMatch(/retry/)
    for (const [method, path, op] of operations()) {
      for (const p of op.parameters ?? []) {
        if (p.in === "header") expect(p.name, `${method} ${path}`).toMatch(/^[A-Z][a-z]*(-[A-Z][a-z]*)*$/)
      }
    }
    expect(doc.paths["/v1/api/messages"].post.responses["201"].headers["Idempotency-Replayed"]).toBeDefined()
    expect(doc.paths["/v1/api/contacts"].post.responses["201"].headers["Idempotency-Replayed"]).toBeUndefined()
  })

  it("documents the scoped, id-taking contacts routes with 403 and 404", () => {
    for (const [method, path, op] of operations()) {
      if (!path.startsWith("/v1/api/contacts")) continue
      expect(op.responses["403"], `${method} ${path}`).toBeDefined()
      if (path.includes("{id}")) expect(op.responses["404"], `${method} ${path}`).toBeDefined()
    }
  })

  it("lists every served contacts route with its success status", async () => {
    const expected: Array<[string, string, string]> = [
      ["GET", "/v1/api/contacts", "200"],
      ["POST", "/v1/api/contacts", "201"],
      ["GET", "/v1/api/contacts/{id}", "200"],
      ["PATCH", "/v1/api/contacts/{id}", "200"],
      ["DELETE", "/v1/api/contacts/{id}", "200"]
    ]
    const documented = operations().map(([m, p]) => `${m} ${p}`)
    for (const [method, path, status] of expected) {
      expect(documented).toContain(`${method} ${path}`)
      expect(doc.paths[path][method.toLowerCase()].responses[status], `${method} ${path}`).toBeDefined()
    }
    // And everything documented under /v1/api/contacts is really served (answers 401 without a key, not 404).
    for (const [method, path] of operations()) {
      if (!path.startsWith("/v1/api/contacts")) continue
      const concrete = path.replace("{id}", crypto.randomUUID())
      const res = await app.fetch(concrete, {
        method,
        ...(method === "POST" || method === "PATCH" ? { json: {} } : {})
      })
      expect(res.status, `${method} ${path}`).toBe(401)
    }
  })

  it("lists the admin routes of CONTRACT.md", () => {
    const documented = operations().map(([m, p]) => `${m} ${p}`)
    for (
      const route of [
        "POST /v1/admin/workspaces",
        "GET /v1/admin/workspaces/{id}",
        "PATCH /v1/admin/workspaces/{id}",
        "POST /v1/admin/workspaces/{id}/keys",
        "DELETE /v1/admin/keys/{keyId}",
        "POST /v1/admin/workspaces/{id}/numbers",
        "GET /v1/admin/workspaces/{id}/ledger",
        "GET /v1/admin/workspaces/{id}/audit-log",
        "GET /v1/admin/workspaces/{id}/mail",
        // Issue 20: what an operator lists, shows and removes.
        "GET /v1/admin/workspaces",
        "GET /v1/admin/workspaces/{id}/keys",
        "GET /v1/admin/keys/{keyId}",
        "GET /v1/admin/workspaces/{id}/numbers",
        "DELETE /v1/admin/workspaces/{id}/numbers/{e164}",
        // "Members and the console".
        "POST /v1/admin/workspaces/{id}/members",
        "GET /v1/admin/workspaces/{id}/members",
        "PATCH /v1/admin/members/{memberId}",
        "DELETE /v1/admin/members/{memberId}"
      ]
    ) {
      expect(documented).toContain(route)
    }
  })

  it("documents the query parameters of the contacts list", () => {
    const params = doc.paths["/v1/api/contacts"].get.parameters as Array<any>
    expect(params.map((p) => p.name).sort()).toEqual(["cursor", "limit", "q"])
    for (const p of params) expect(p.in).toBe("query")
  })

  it("documents the contact detail with every SPEC field", () => {
    const contact = doc.components.schemas.Contact
    expect(Object.keys(contact.properties).sort()).toEqual(
      [
        "company",
        "createdAt",
        "emails",
        "firstName",
        "id",
        "lastName",
        "notes",
        "phones",
        "properties",
        "source",
        "tags"
      ]
    )
    const summary = doc.components.schemas.ContactSummary
    expect(Object.keys(summary.properties).sort()).toEqual([
      "company",
      "createdAt",
      "firstName",
      "id",
      "lastName",
      "phone"
    ])
  })

  it("names a server and says to use the deployment's base URL", () => {
    expect(doc.servers.length).toBeGreaterThan(0)
    expect(doc.servers[0].url).toBe("/")
    expect(doc.servers[0].description).toMatch(/base URL/)
  })

  it("gives every operation and webhook a summary and a unique operationId", () => {
    const ids = new Set<string>()
    const webhooks = Object.entries<any>(doc.webhooks).map((
      [type, item]
    ): [string, string, any] => ["POST", `webhook ${type}`, item.post])
    expect(webhooks.length).toBeGreaterThan(0)
    for (const [method, path, op] of [...operations(), ...webhooks]) {
      expect(op.summary, `${method} ${path}`).toMatch(/\S/)
      expect(op.operationId, `${method} ${path}`).toMatch(/\S/)
      expect(ids.has(op.operationId), op.operationId).toBe(false)
      ids.add(op.operationId)
    }
    expect(doc.paths["/v1/api/contacts"].get.operationId).toBe("contacts.list")
    expect(doc.webhooks["message.received"].post.operationId).toBe("webhook.message.received")
  })

  it("describes every tag, once, and tags each operation with one of them", () => {
    const names = doc.tags.map((t: any) => t.name)
    expect(new Set(names).size).toBe(names.length)
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\S/)
    for (const [method, path, op] of operations()) {
      for (const tag of op.tags) expect(names, `${method} ${path}`).toContain(tag)
    }
  })

  it("documents every `limit` as the integer it is, with its range", () => {
    const limits = operations().flatMap(([, , op]) => (op.parameters ?? []).filter((p: any) => p.name === "limit"))
    expect(limits.length).toBeGreaterThan(0)
    for (const p of limits) {
      expect(p.schema.type).toBe("integer")
      expect(p.schema.minimum).toBe(1)
      expect(p.schema.maximum).toBeGreaterThan(1)
      expect(p.description).toMatch(/\S/)
    }
    expect(doc.paths["/v1/api/contacts"].get.parameters.find((p: any) => p.name === "limit").schema.maximum).toBe(200)
  })

  it("carries no automatic texts from the schema library, but keeps the keywords they repeated", () => {
    const text = JSON.stringify(doc)
    expect(text).not.toMatch(
      /character\(s\)|item\(s\)|"title":"(maxLength|minLength|maxItems|minItems|between|int)\b|a string matching the pattern|to be decoded into|a Universally Unique Identifier/
    )
    const q = doc.paths["/v1/api/contacts"].get.parameters.find((p: any) => p.name === "q")
    expect(q.schema.maxLength).toBe(200)
    expect(doc.components.schemas.Contact.properties.phones.items.properties.label.maxLength).toBe(64)
  })

  it("describes the fields a client needs: ids, phones, timestamps, cursors", () => {
    const list = doc.paths["/v1/api/contacts"].get
    const cursor = list.parameters.find((p: any) => p.name === "cursor")
    expect(cursor.description).toMatch(/nextCursor/)
    expect(list.responses["200"].content["application/json"].schema.properties.nextCursor.description).toMatch(/cursor/)
    const contact = doc.components.schemas.Contact.properties
    expect(contact.id.description).toMatch(/id/)
    expect(contact.createdAt.description).toMatch(/ISO 8601/)
    const sent = doc.paths["/v1/api/messages"].post.responses["201"].content["application/json"].schema.properties
    expect(sent.conversationId.description).toBe("The id of the conversation")
    expect(doc.components.schemas.ConversationSummary.properties.numberE164.description).toMatch(/E\.164/)
    const e164 = doc.components.schemas.AvailableNumber.properties.phone_number
    expect(e164.description).toMatch(/E\.164/)
    expect(e164.pattern).toBeDefined()
    for (const [method, path, op] of operations()) {
      for (const p of op.parameters ?? []) {
        if (p.in !== "header") expect(p.description, `${method} ${path} ${p.name}`).toMatch(/\S/)
      }
    }
  })
})
