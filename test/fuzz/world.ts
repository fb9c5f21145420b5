/**
 * What the fuzz suite runs against: the real server as a child process (PGlite in a temporary
 * directory) and a local receiver for the URLs it fetches or delivers to; a fuzzed workspace with
 * keys of every kind and scope and some data whose ids feed the path parameters; and a second
 * workspace whose ids, secrets and marker strings no answer to the first workspace's keys may hold.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServer } from "../support/server.ts"
import { type Document, readDocument } from "./openapi.ts"
import { ADMIN_SCHEME, type Credentials, type RequestContext } from "./requests.ts"

export interface World extends RequestContext {
  readonly port: number
  readonly document: Document
  /** The second workspace's ids, secrets, tokens and markers. */
  readonly foreign: ReadonlyArray<string>
  readonly serverOutput: () => string
  readonly close: () => Promise<void>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const E164 = /^\+[1-9]\d{6,14}$/

/** A 1x1 PNG, served for every media URL. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64"
)

const startReceiver = async (): Promise<{ origin: string; close: () => Promise<void> }> => {
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      if (req.method === "GET") res.writeHead(200, { "content-type": "image/png" }).end(PNG)
      else res.writeHead(200).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}

/**
 * Real values by name, gathered from answers: `contact.id`, `contacts.id`, `nextCursor`; scoped to
 * the route they came from as `<path>#<name>` (`/v1/api/contacts#nextCursor`, and the path
 * parameters of URLs the server made: `/v1/media/{workspaceId}/{key}#key`).
 */
class Pools {
  private readonly pools = new Map<string, Set<string>>()
  /** Every word of the workspace's text. */
  readonly words = new Set<string>()
  constructor(private readonly templates: ReadonlyArray<string>) {}

  private add(name: string, value: string) {
    if (value.length === 0 || value.length > 500) return
    let pool = this.pools.get(name)
    if (pool === undefined) this.pools.set(name, pool = new Set())
    pool.add(value)
  }

  /** Every string in an answer (of the route `scope`), by the key holding it; an object's `id` also as `<key>.id`. */
  harvest(value: unknown, scope = "", key = "") {
    if (typeof value === "string") {
      this.add(key, value)
      if (scope !== "") this.add(`${scope}#${key}`, value)
      for (const word of value.split(/[^\p{L}\p{N}]+/u)) if (word.length >= 3) this.words.add(word)
      if (/^https?:\/\//.test(value)) this.harvestUrl(value)
    } else if (Array.isArray(value)) {
      for (const v of value) this.harvest(v, scope, key)
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "id" && typeof v === "string") this.add(`${key}.id`, v)
        this.harvest(v, scope, k)
      }
    }
  }

  /** A URL the server made (a signed media URL...): its query values by name, and the path parameters of the route it matches. */
  private harvestUrl(raw: string) {
    const url = new URL(raw)
    url.searchParams.forEach((v, k) => this.add(k, v))
    const parts = url.pathname.split("/")
    for (const template of this.templates) {
      const t = template.split("/")
      if (t.length !== parts.length || !t.every((s, i) => /^\{.+\}$/.test(s) || s === parts[i])) continue
      t.forEach((s, i) => {
        const param = /^\{(.+)\}$/.exec(s)?.[1]
        if (param !== undefined) this.add(`${template}#${param}`, decodeURIComponent(parts[i]!))
      })
    }
  }

  /**
   * Values for `[<path>#][<owner>.]<field>`: the route's own first (`cursor` also as
   * `nextCursor`), else by name (`contacts.id` also reads `contact.id`, `keyId` also `key.id`),
   * else, for a name of an id, every id seen.
   */
  known = (name: string): ReadonlyArray<string> => {
    const hash = name.lastIndexOf("#")
    const scope = name.slice(0, Math.max(hash, 0))
    const rest = name.slice(hash + 1)
    const dot = rest.lastIndexOf(".")
    const owner = rest.slice(0, Math.max(dot, 0))
    const field = rest.slice(dot + 1)
    const next = `next${field.charAt(0).toUpperCase()}${field.slice(1)}`
    const lookup = (names: Array<string>) => [...new Set(names.flatMap((n) => [...(this.pools.get(n) ?? [])]))].sort()
    const own = scope === "" ? [] : lookup([`${scope}#${field}`, `${scope}#${next}`])
    if (own.length > 0) return own
    const names = owner === "" ? [] : [`${owner}.${field}`, `${owner.replace(/s$/, "")}.${field}`]
    if (field !== "id") names.push(field, next)
    if (/Id$/.test(field)) names.push(`${field.slice(0, -2)}.id`)
    const byName = lookup(names)
    return byName.length > 0 || !/(^id|Id)$/.test(field) ? byName : lookup(["id"])
  }
}

/** Every string value anywhere in a JSON value. */
const strings = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
    ? value.flatMap(strings)
    : value !== null && typeof value === "object"
    ? Object.values(value).flatMap(strings)
    : []

export const startWorld = async (): Promise<World> => {
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-fuzz-"))
  const receiver = await startReceiver()
  const adminToken = `admin-${randomBytes(16).toString("hex")}`
  // A per-key limit no fuzz run reaches, so 429 never hides another answer; private addresses
  // allowed so media and webhook URLs reach the receiver (the suite never names an outside host).
  const server = await startServer("node", {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    RATE_LIMIT_PER_MINUTE: "100000000",
    OUTBOUND_ALLOW_PRIVATE: "true"
  })
  const close = async () => {
    await server.stop()
    await receiver.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const call = async (path: string, token: string, method = "GET", body?: unknown) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      // JSON, except a text answer such as GET /metrics (harvested as one string).
      const json = (res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text()) as any
      if (res.status >= 300) throw new Error(`setup: ${method} ${path} answered ${res.status} ${JSON.stringify(json)}`)
      return json
    }
    const raw = await (await fetch(`${server.baseUrl}/v1/api/openapi.json`)).json()
    const document = readDocument(raw)
    const pools = new Pools(document.operations.map((o) => o.path))

    // The fuzzed workspace's numbers: every E.164 number in the document's examples (so example
    // requests can succeed) and one more; the other workspace's is none of them.
    const randomNumber = () => `+1415555${String(1000 + (randomBytes(2).readUInt16BE() % 9000))}`
    const numbers = [...new Set([...strings(raw).filter((s) => E164.test(s)), randomNumber()])]
    let otherNumber = randomNumber()
    while (numbers.includes(otherNumber)) otherNumber = randomNumber()

    const workspace = async (name: string) => {
      const { workspace } = await call("/v1/admin/workspaces", adminToken, "POST", {
        name,
        billing: { plan: "standard", trial: false, paymentMethod: true, identity: "verified", mobileVerified: true }
      })
      const key = async (spec: Record<string, unknown>) =>
        (await call(`/v1/admin/workspaces/${workspace.id}/keys`, adminToken, "POST", { kind: "test", ...spec })).key
      return { workspace, key }
    }

    // The second workspace, seeded through its own key with markers in every text field it has.
    const marker = `zzmark${randomBytes(6).toString("hex")}`
    const other = await workspace(`${marker} workspace`)
    const otherKey = await other.key({ name: `${marker} key` })
    await call(`/v1/admin/workspaces/${other.workspace.id}/numbers`, adminToken, "POST", { e164: otherNumber })
    const foreignAnswers: Array<unknown> = [other.workspace, otherKey]
    const seed = async (token: string, number: string, text: string, harvest: (answer: unknown) => void) => {
      const post = async (path: string, body: unknown) => harvest(await call(path, token, "POST", body))
      await post("/v1/api/contacts", {
        firstName: `${text} first`,
        lastName: `${text} last`,
        company: `${text} company`,
        phone: "+12025550143",
        email: `${text}@example.org`,
        notes: [`${text} note`],
        tags: [`${text}tag`],
        properties: { [`${text}prop`]: `${text} value` }
      })
      await post("/v1/api/contacts", { firstName: `${text} second` })
      const { webhook } = await call("/v1/api/webhooks", token, "POST", {
        url: `${receiver.origin}/${text}`,
        events: ["*"],
        label: `${text} label`
      })
      harvest({ webhook })
      // A delivery (a ping), so the delivery routes (retry) have a real id to work on.
      await post(`/v1/api/webhooks/${webhook.id}/test`, undefined)
      await post("/v1/api/test-helpers/inbound-messages", {
        from: "+12025550143",
        to: number,
        body: `${text} inbound`,
        mediaUrls: [`${receiver.origin}/${text}.png`]
      })
      await post("/v1/api/messages", {
        to: "+12025550143",
        from: number,
        body: `${text} outbound`,
        mediaUrls: [`${receiver.origin}/${text}.png`]
      })
      // Opt-outs of each source the API can make: one recorded through it (the one DELETE removes)
      // and one from a texted STOP (which DELETE refuses).
      await post("/v1/api/opt-outs", { phone: "+12025550145", note: `${text} opt-out note` })
      await post("/v1/api/test-helpers/inbound-messages", { from: "+12025550146", to: number, body: "STOP" })
      // A scheduled message and a broadcast a day ahead, so their ids feed the path parameters.
      const sendAt = new Date(Date.now() + 86_400_000).toISOString()
      await post("/v1/api/scheduled-messages", { to: "+12025550143", body: `${text} scheduled`, sendAt })
      await post("/v1/api/broadcasts", {
        body: `${text} broadcast`,
        recipients: { phones: ["+12025550143", "+12025550147"], tags: [`${text}tag`] },
        sendAt
      })
    }
    await seed(otherKey.token, otherNumber, marker, (answer) => foreignAnswers.push(answer))

    // The fuzzed workspace.
    const fuzzed = await workspace("Fuzzed workspace")
    pools.harvest(fuzzed.workspace, "", "workspace")
    const full = await fuzzed.key({})
    const live = (await fuzzed.key({ kind: "live" })).token as string
    const scoped: Array<string> = []
    for (const scope of full.scopes as Array<string>) scoped.push((await fuzzed.key({ scopes: [scope] })).token)
    const revokedKey = await fuzzed.key({ name: "revoked" })
    await call(`/v1/admin/keys/${revokedKey.id}`, adminToken, "DELETE")
    // A key the fuzzer may revoke; the keys it authenticates with stay out of the pools.
    pools.harvest(await fuzzed.key({ name: "sacrificial" }), "", "key")
    for (const e164 of numbers) {
      pools.harvest(await call(`/v1/admin/workspaces/${fuzzed.workspace.id}/numbers`, adminToken, "POST", { e164 }))
    }
    // An owner and a member, so the member routes reach a real one (the last owner's refusals included).
    for (const [email, role] of [["fuzz-owner@example.org", "owner"], ["fuzz-member@example.org", "member"]]) {
      pools.harvest(
        await call(`/v1/admin/workspaces/${fuzzed.workspace.id}/members`, adminToken, "POST", {
          email,
          name: "Fuzz",
          role,
          phone: "+12025550145"
        })
      )
    }
    await seed(full.token, numbers[0]!, "fuzz", (answer) => pools.harvest(answer))
    // A sole proprietor's mock registration waiting for its PIN, so the PIN routes have one to check.
    await call("/v1/api/test-helpers/registry", full.token, "POST", { brand: "otp" })
    await call("/v1/api/messaging/registration", full.token, "POST", {
      business: {
        entityType: "SOLE_PROPRIETOR",
        displayName: "Fuzz",
        firstName: "F",
        lastName: "Z",
        mobilePhone: "+12025550144",
        email: "f@example.org",
        vertical: "RETAIL",
        street: "1 St",
        city: "C",
        state: "CA",
        postalCode: "94105"
      }
    })
    await call("/v1/api/messaging/refresh", full.token, "POST")
    // Every list the document has (a page of one where it pages), for more real ids and cursors.
    for (const op of document.operations) {
      if (op.method !== "GET" || op.parameters.some((p) => p.in === "path" || p.required) || op.security.length === 0) {
        continue
      }
      // Not the operator's views: they list every workspace, so a value harvested there (the other
      // workspace's marker) echoed back by a create would read as a leak.
      if (op.security.includes(ADMIN_SCHEME)) continue
      const token = full.token
      const query = op.parameters.some((p) => p.in === "query" && p.name === "limit") ? "?limit=1" : ""
      pools.harvest(await call(`${op.path}${query}`, token, "GET"), op.path)
    }

    const foreign = [
      marker,
      ...new Set(
        foreignAnswers.flatMap(strings).filter((s) =>
          UUID.test(s) || s.startsWith("whsec_") || s.startsWith("svc_") || s.includes(marker)
        )
      )
    ]
    const credentials: Credentials = { full: full.token, live, scoped, revoked: revokedKey.token, adminToken }
    return {
      port: Number(new URL(server.baseUrl).port),
      document,
      credentials,
      resolve: document.resolve,
      known: pools.known,
      words: [...pools.words].sort(),
      confine: (url) => {
        try {
          const { pathname, search } = new URL(url)
          return `${receiver.origin}${pathname}${search}`
        } catch {
          return `${receiver.origin}/`
        }
      },
      foreign,
      serverOutput: server.output,
      close
    }
  } catch (e) {
    await close()
    throw e
  }
}
