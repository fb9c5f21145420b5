/**
 * CONTRACT "Opt-outs and keywords" through the HTTP API (in-process) and the MCP endpoint (the
 * official SDK client over the same app): STOP, START and HELP texted through the test helpers and
 * their answers in the thread; every send path refused after a STOP, storing nothing; the opt-out
 * list's routes and rules; the two events, delivered to a local receiver and verified with
 * `standardwebhooks`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { catalog } from "../../core/events/catalog.ts"
import { OptOuts } from "../../core/optouts/service.ts"
import { makeTestApp } from "../support/app.ts"
import { business, readyBilling, soleProprietor } from "../support/registration.ts"
import { bearer, expectError, expectOk, tick } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

/** A 1x1 PNG, served for every GET (a media URL). */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64"
)

const HELP_MESSAGE = "Acme Plumbing: call 217-555-0142 or reply with your question. Reply STOP to opt out."

interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

let app: App
let receiver: Server
const received: Array<Received> = []
const receiverUrl = (path: string) => `http://127.0.0.1:${(receiver.address() as { port: number }).port}${path}`

beforeAll(async () => {
  app = await makeTestApp({ webhookWorker: true, webhookPollMs: 20 })
  receiver = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body })
      if (req.method === "GET") res.writeHead(200, { "content-type": "image/png" }).end(PNG)
      else res.writeHead(200).end()
    })
  })
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", () => done()))
})
afterAll(async () => {
  await app.close()
  await new Promise((done) => receiver.close(done))
})

const call = (token: string, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  app.fetch(`/v1/api${path}`, {
    method,
    headers: { ...bearer(token), ...headers },
    ...(json === undefined ? {} : { json })
  })

let nextNumber = 100

/**
 * A workspace with test and live keys and one number seeded by the operator (so live); with
 * `registration` `live`, a live filing with a campaign `helpMessage`, brought to an active campaign
 * and the number assigned, so a live key texts; `mock`, a test key's filing without one.
 */
const workspace = async (registration: "live" | "mock" | "none", name = "Acme Plumbing Co") => {
  const { workspaceId } = await app.createWorkspace(name, readyBilling)
  const test = (await app.createKey(workspaceId, { kind: "test" })).token
  const live = (await app.createKey(workspaceId, { kind: "live" })).token
  const number = `+1217555${String(nextNumber++).padStart(4, "0")}`
  await expectOk(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: number } }), 201)
  if (registration === "live") {
    await expectOk(
      await call(live, "POST", "/messaging/registration", { business, campaign: { helpMessage: HELP_MESSAGE } }),
      201
    )
    for (let i = 0; i < 3; i++) await expectOk(await call(live, "POST", "/messaging/refresh"))
    expect((await expectOk(await call(live, "GET", "/messaging"))).messaging.step).toBe("campaign_active")
  } else if (registration === "mock") {
    await expectOk(await call(test, "POST", "/messaging/registration", { business }), 201)
  }
  return { workspaceId, test, live, number }
}

type Workspace = Awaited<ReturnType<typeof workspace>>

/** A text from `from` to the workspace's number, through the test helper. */
const texted = async (ws: Workspace, from: string, body: string) =>
  expectOk(await call(ws.test, "POST", "/test-helpers/inbound-messages", { from, to: ws.number, body }), 201)

const thread = async (ws: Workspace, conversationId: string) =>
  (await expectOk(await call(ws.test, "GET", `/conversations/${conversationId}`))).activities as Array<any>

const optOuts = async (ws: Workspace, query = "") =>
  (await expectOk(await call(ws.test, "GET", `/opt-outs${query}`))) as {
    optOuts: Array<any>
    nextCursor: string | null
  }

/** The message of a send to `to` refused with 409. */
const refusedSend = async (ws: Workspace, to: string) =>
  (await expectError(await call(ws.test, "POST", "/messages", { to, body: "Hi" }), 409, "failed_precondition")).message

const optedOutMessage = (phone: string, createdAt: string, reason: string) =>
  `${phone} opted out of texts from this workspace on ${
    createdAt.slice(0, 10)
  } (${reason}); they can opt back in by texting START`

/** The official MCP client, over the in-process app. */
const mcp = async (token: string) => {
  const client = new Client({ name: "opt-outs-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://test.local/v1/mcp"), {
      requestInit: { headers: bearer(token) },
      fetch: (url, init) => app.fetch(new URL(url).pathname, init)
    })
  )
  return client
}

type ToolResult = Awaited<ReturnType<Client["callTool"]>>
const toolText = (r: ToolResult) => (r.content as Array<{ type: string; text: string }>)[0]!.text
const toolOk = (r: ToolResult): any => {
  if (r.isError) throw new Error(`tool failed: ${toolText(r)}`)
  return r.structuredContent
}
const toolError = (r: ToolResult) => {
  expect(r.isError).toBe(true)
  return (JSON.parse(toolText(r)) as { error: { code: string; message: string } }).error
}

/** The events of `types` the receiver got at `path`, verified with the endpoint's secret. */
/** Deliveries run concurrently and may arrive out of order: sorted by the events' own times. */
const deliveredEvents = (path: string, secret: string, types: ReadonlyArray<string>) =>
  received.filter((r) => r.path === path).flatMap((r) => {
    const event = new Webhook(secret).verify(r.body, {
      "webhook-id": String(r.headers["webhook-id"]),
      "webhook-timestamp": String(r.headers["webhook-timestamp"]),
      "webhook-signature": String(r.headers["webhook-signature"])
    }) as { type: string; timestamp: string; data: Record<string, unknown> }
    return types.includes(event.type) ? [event] : []
  }).sort((a, b) => a.timestamp.localeCompare(b.timestamp))

describe("STOP, then every send refused; START, then sends accepted", () => {
  it("a texted STOP opts the sender out and is answered once; REST (test and live keys, to or conversationId) and MCP sends are refused with nothing stored; START opts back in", async () => {
    const ws = await workspace("live")
    const hook = (await expectOk(
      await call(ws.test, "POST", "/webhooks", {
        url: receiverUrl("/keywords"),
        events: ["contact.opted_out", "contact.opted_in"]
      }),
      201
    )).webhook
    const phone = "+12175550111"

    const stop = await texted(ws, phone, "STOP")
    const { conversationId, contactId } = stop
    const afterStop = await thread(ws, conversationId)
    expect(afterStop.map((a) => [a.direction, a.body, a.authorUid])).toEqual([
      ["inbound", "STOP", null],
      [
        "outbound",
        "Acme Plumbing: You are unsubscribed and will receive no more messages. Reply START to resubscribe.",
        null
      ]
    ])
    expect(afterStop[1].deliveryStatus).toBe("simulated")
    const [optOut] = (await optOuts(ws)).optOuts
    expect(optOut).toEqual({ phone, source: "keyword", keyword: "STOP", note: null, createdAt: optOut.createdAt })
    const refusal = optedOutMessage(phone, optOut.createdAt, "replied STOP")

    // A second STOP is stored, changes nothing and is not answered again.
    await texted(ws, phone, "stop")
    expect((await thread(ws, conversationId)).map((a) => a.body)).toEqual([...afterStop.map((a) => a.body), "stop"])
    expect((await optOuts(ws)).optOuts).toEqual([optOut])
    const before = await thread(ws, conversationId)
    const conversations = (await expectOk(await call(ws.test, "GET", "/conversations"))).conversations

    // Every send path: test key, live key (which passes every other gate), into the thread, with an
    // Idempotency-Key, and the MCP tool.
    for (const token of [ws.test, ws.live]) {
      const e = await expectError(
        await call(token, "POST", "/messages", { to: "(217) 555-0111", body: "Your plumber is on the way" }),
        409,
        "failed_precondition"
      )
      expect(e.message).toBe(refusal)
      const inThread = await expectError(
        await call(token, "POST", "/messages", { conversationId, body: "Hello?" }, { "idempotency-key": "k-1" }),
        409,
        "failed_precondition"
      )
      expect(inThread.message).toBe(refusal)
    }
    const client = await mcp(ws.test)
    expect(toolError(await client.callTool({ name: "messages_send", arguments: { to: phone, body: "Hi" } }))).toEqual(
      expect.objectContaining({ code: "failed_precondition", message: refusal })
    )
    await client.close()
    expect(await thread(ws, conversationId)).toEqual(before)
    expect((await expectOk(await call(ws.test, "GET", "/conversations"))).conversations).toEqual(conversations)
    // Nor is an attachment fetched or stored for a refused send.
    const media = await expectError(
      await call(ws.test, "POST", "/messages", { to: phone, body: "Photo", mediaUrls: [receiverUrl("/photo.png")] }),
      409,
      "failed_precondition"
    )
    expect(media.message).toBe(refusal)
    expect(received.filter((r) => r.path === "/photo.png")).toEqual([])
    expect(await thread(ws, conversationId)).toEqual(before)

    // START opts back in, answered in the thread; the refused idempotency key was not spent.
    await texted(ws, phone, "Start!")
    expect((await thread(ws, conversationId)).slice(-2).map((a) => [a.direction, a.body, a.authorUid])).toEqual([
      ["inbound", "Start!", null],
      ["outbound", "Acme Plumbing: You are resubscribed. Reply STOP to unsubscribe, HELP for help.", null]
    ])
    expect((await optOuts(ws)).optOuts).toEqual([])
    const sent = await expectOk(
      await call(ws.test, "POST", "/messages", { conversationId, body: "Hello?" }, { "idempotency-key": "k-1" }),
      201
    )
    expect(sent.simulated).toBe(true)
    const live = await expectOk(await call(ws.live, "POST", "/messages", { to: phone, body: "On our way" }), 201)
    expect(live.message.deliveryStatus).toBe("queued")
    expect(live.simulated).toBeUndefined()
    // START from a sender not opted out changes nothing and is not answered.
    await texted(ws, phone, "START")
    expect((await thread(ws, conversationId)).at(-1)).toMatchObject({ direction: "inbound", body: "START" })

    // The events, signed, in order, each once.
    await expect.poll(
      () => deliveredEvents("/keywords", hook.secret, ["contact.opted_out", "contact.opted_in"]).length,
      {
        timeout: 10_000
      }
    ).toBe(2)
    expect(deliveredEvents("/keywords", hook.secret, ["contact.opted_out", "contact.opted_in"])).toEqual([
      expect.objectContaining({
        type: "contact.opted_out",
        data: { phone, contactId, source: "keyword", keyword: "STOP" }
      }),
      expect.objectContaining({
        type: "contact.opted_in",
        data: { phone, contactId, source: "keyword", keyword: "START" }
      })
    ])
  })

  it("every stop word opts out, every start word opts back in, matched on the whole text only", async () => {
    const ws = await workspace("none")
    const words: Array<[string, string, string]> = [
      ["STOPALL", "STOPALL", "START"],
      ["  stop all. ", "STOP ALL", "unstop"],
      ["Unsubscribe", "UNSUBSCRIBE", "YES"],
      ["cancel!", "CANCEL", "subscribe"],
      ["End", "END", "START"],
      ["QUIT", "QUIT", "START"],
      ["revoke", "REVOKE", "START"],
      ["OptOut", "OPTOUT", "START"],
      ["opt   out", "OPT OUT", "START"],
      ["Opt-Out?!", "OPT-OUT", "START"]
    ]
    for (const [i, [stop, word, start]] of words.entries()) {
      const phone = `+1217555${String(9000 + i)}`
      await texted(ws, phone, stop)
      expect((await optOuts(ws, `?phone=${encodeURIComponent(phone)}`)).optOuts, stop).toEqual([
        expect.objectContaining({ phone, source: "keyword", keyword: word })
      ])
      await texted(ws, phone, start)
      expect((await optOuts(ws, `?phone=${encodeURIComponent(phone)}`)).optOuts, start).toEqual([])
    }
    // Not keywords: a keyword inside a sentence, or with something after it.
    for (const body of ["stop please", "Please STOP", "STOP 2", "HELP me", "stopp"]) {
      const { conversationId } = await texted(ws, "+12175559999", body)
      expect((await thread(ws, conversationId)).at(-1), body).toMatchObject({ direction: "inbound", body })
    }
    expect((await optOuts(ws, "?phone=%2B12175559999")).optOuts).toEqual([])
    expect(
      (await expectOk(await call(ws.test, "POST", "/messages", { to: "+12175559999", body: "Still here" }), 201))
        .simulated
    ).toBe(true)
  })
})

describe("HELP", () => {
  it("answers the campaign's helpMessage, changes nothing, and is answered each time", async () => {
    const ws = await workspace("live")
    const { conversationId } = await texted(ws, "+12175550122", "help")
    await texted(ws, "+12175550122", "INFO.")
    expect((await thread(ws, conversationId)).map((a) => [a.direction, a.body, a.authorUid])).toEqual([
      ["inbound", "help", null],
      ["outbound", HELP_MESSAGE, null],
      ["inbound", "INFO.", null],
      ["outbound", HELP_MESSAGE, null]
    ])
    expect((await optOuts(ws)).optOuts).toEqual([])
  })

  it("without a helpMessage: the default wording with the registration's brand and business phone, else the workspace's name", async () => {
    const filed = await workspace("mock")
    const a = await texted(filed, "+12175550133", "HELP")
    expect((await thread(filed, a.conversationId)).at(-1)).toMatchObject({
      direction: "outbound",
      authorUid: null,
      body: "Acme Plumbing: Reply STOP to unsubscribe. Msg & data rates may apply. Help: +12175550142."
    })
    const sole = await workspace("none")
    await expectOk(await call(sole.test, "POST", "/messaging/registration", { business: soleProprietor }), 201)
    const b = await texted(sole, "+12175550133", "HELP")
    expect((await thread(sole, b.conversationId)).at(-1)!.body).toBe(
      "Jo's Tutoring: Reply STOP to unsubscribe. Msg & data rates may apply. Help: jo@tutoring.example."
    )
    const bare = await workspace("none", "Corner Bakery")
    const c = await texted(bare, "+12175550133", "HELP")
    expect((await thread(bare, c.conversationId)).at(-1)!.body).toBe(
      "Corner Bakery: Reply STOP to unsubscribe. Msg & data rates may apply."
    )
    const stop = await texted(bare, "+12175550134", "STOP")
    expect((await thread(bare, stop.conversationId)).at(-1)!.body).toBe(
      "Corner Bakery: You are unsubscribed and will receive no more messages. Reply START to resubscribe."
    )
  })
})

describe("GET, POST and DELETE /opt-outs", () => {
  it("POST records an opt-out (201) or answers the one on record (200); sends are refused until DELETE removes it; events for both", async () => {
    const ws = await workspace("none")
    const hook = (await expectOk(
      await call(ws.test, "POST", "/webhooks", { url: receiverUrl("/api"), events: ["*"] }),
      201
    )).webhook
    const contact = (await expectOk(
      await call(ws.test, "POST", "/contacts", { firstName: "Ada", phone: "+14155550123" }),
      201
    )).contact

    const created = await expectOk(
      await call(ws.test, "POST", "/opt-outs", { phone: "(415) 555-0123", note: "Asked on the phone" }),
      201
    )
    expect(Object.keys(created)).toEqual(["optOut"])
    expect(created.optOut).toEqual({
      phone: "+14155550123",
      source: "api",
      keyword: null,
      note: "Asked on the phone",
      createdAt: created.optOut.createdAt
    })
    expect(await expectOk(await call(ws.test, "POST", "/opt-outs", { phone: "+14155550123", note: "Again" }))).toEqual(
      created
    )
    expect((await optOuts(ws)).optOuts).toEqual([created.optOut])
    expect(await refusedSend(ws, "+14155550123")).toBe(
      optedOutMessage("+14155550123", created.optOut.createdAt, "recorded through the API")
    )

    // The `+` encoded, as a client sends it; a bare `+`, and a space a form decoder made of one, are read alike.
    expect(await expectOk(await call(ws.test, "DELETE", "/opt-outs/%2B14155550123"))).toEqual({ deleted: true })
    expect(
      (await expectError(await call(ws.test, "DELETE", "/opt-outs/%2B14155550123"), 404, "not_found")).message
    ).toBe("+14155550123 has not opted out of texts from this workspace")
    await expectOk(await call(ws.test, "POST", "/opt-outs", { phone: "+14155550123" }), 201)
    expect(await expectOk(await call(ws.test, "DELETE", "/opt-outs/+14155550123"))).toEqual({ deleted: true })
    await expectOk(await call(ws.test, "POST", "/opt-outs", { phone: "+14155550123" }), 201)
    expect(await expectOk(await call(ws.test, "DELETE", "/opt-outs/%2014155550123"))).toEqual({ deleted: true })
    await expectOk(await call(ws.test, "POST", "/messages", { to: "+14155550123", body: "Hi" }), 201)

    await expect.poll(() => deliveredEvents("/api", hook.secret, ["contact.opted_out", "contact.opted_in"]).length, {
      timeout: 10_000
    }).toBe(6)
    const events = deliveredEvents("/api", hook.secret, ["contact.opted_out", "contact.opted_in"])
    expect(events.map((e) => e.type)).toEqual([
      "contact.opted_out",
      "contact.opted_in",
      "contact.opted_out",
      "contact.opted_in",
      "contact.opted_out",
      "contact.opted_in"
    ])
    for (const e of events) {
      expect(e.data).toEqual({ phone: "+14155550123", contactId: contact.id, source: "api", keyword: null })
    }
  })

  it("answers 201 then 200 served the library's way too (FAST_PATH=false: HttpApiBuilder's encoder picks the status)", async () => {
    const library = await makeTestApp({ fastPath: false })
    try {
      const { key } = await library.createWorkspace("Library path")
      const post = () =>
        library.fetch("/v1/api/opt-outs", { method: "POST", headers: bearer(key), json: { phone: "+14155550190" } })
      const created = await expectOk(await post(), 201)
      expect(await expectOk(await post(), 200)).toEqual(created)
      expect(Object.keys(created)).toEqual(["optOut"])
    } finally {
      await library.close()
    }
  })

  it("DELETE refuses a keyword or carrier opt-out (409); POST answers that one with 200", async () => {
    const ws = await workspace("none")
    await texted(ws, "+12175550144", "STOP")
    const keyword = (await optOuts(ws)).optOuts[0]
    expect(await expectOk(await call(ws.test, "POST", "/opt-outs", { phone: "+12175550144", note: "x" }))).toEqual({
      optOut: keyword
    })
    const refused = await expectError(
      await call(ws.test, "DELETE", "/opt-outs/%2B12175550144"),
      409,
      "failed_precondition"
    )
    expect(refused.message).toBe("Only the recipient can opt back in, by texting START")

    // The carrier's refusal is recorded by the send path (Telnyx 40300), here directly.
    await app.runtime.runPromise(
      Effect.flatMap(
        OptOuts,
        (o) => o.optOut(ws.workspaceId, "+12175550145", { source: "carrier", keyword: null, note: "40300" })
      )
    )
    const carrier = await expectError(
      await call(ws.test, "DELETE", "/opt-outs/%2B12175550145"),
      409,
      "failed_precondition"
    )
    expect(carrier.message).toBe("Only the recipient can opt back in, by texting START")
    expect(await refusedSend(ws, "+12175550145")).toMatch(
      /^\+12175550145 opted out of texts from this workspace on \d{4}-\d{2}-\d{2} \(the carrier reported their opt-out\); they can opt back in by texting START$/
    )
    expect((await optOuts(ws)).optOuts.map((o) => [o.phone, o.source])).toEqual([
      ["+12175550145", "carrier"],
      ["+12175550144", "keyword"]
    ])
  })

  it("lists newest first, filters by phone and pages with a cursor bound to the filter; other workspaces see none", async () => {
    const ws = await workspace("none")
    const phones = ["+14155550101", "+14155550102", "+14155550103", "+14155550104", "+14155550105"]
    for (const phone of phones) {
      await expectOk(await call(ws.test, "POST", "/opt-outs", { phone }), 201)
      await tick()
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: { optOuts: Array<any>; nextCursor: string | null } = await optOuts(
        ws,
        `?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      )
      expect(page.optOuts.length).toBeLessThanOrEqual(2)
      seen.push(...page.optOuts.map((o) => o.phone))
      cursor = page.nextCursor
      pages++
    } while (cursor !== null && pages < 10)
    expect(seen).toEqual([...phones].reverse())
    expect((await optOuts(ws)).optOuts.map((o) => o.phone)).toEqual([...phones].reverse())
    expect((await optOuts(ws, "?phone=4155550103")).optOuts.map((o) => o.phone)).toEqual(["+14155550103"])
    expect(await optOuts(ws, "?phone=%2B14155550199")).toEqual({ optOuts: [], nextCursor: null })

    const first = await optOuts(ws, "?limit=2")
    await expectError(
      await call(ws.test, "GET", `/opt-outs?phone=%2B14155550101&cursor=${encodeURIComponent(first.nextCursor!)}`),
      400,
      "invalid_argument"
    )
    await expectError(
      await call(ws.test, "GET", `/opt-outs?cursor=${encodeURIComponent(`${first.nextCursor!}x`)}`),
      400,
      "invalid_argument"
    )

    const other = await workspace("none")
    expect(await optOuts(other)).toEqual({ optOuts: [], nextCursor: null })
    await expectError(await call(other.test, "DELETE", "/opt-outs/%2B14155550101"), 404, "not_found")
    expect(
      (await expectError(
        await call(other.test, "GET", `/opt-outs?cursor=${encodeURIComponent(first.nextCursor!)}`),
        400,
        "invalid_argument"
      )).message
    ).toContain("cursor")
  })

  it("answers 400 naming the field for bad input, and 403 to a key without the scope", async () => {
    const ws = await workspace("none")
    const bad: Array<[string, string, unknown, string]> = [
      ["POST", "/opt-outs", {}, "phone"],
      ["POST", "/opt-outs", { phone: "abc" }, "phone"],
      ["POST", "/opt-outs", { phone: "+1415555" }, "phone"],
      ["POST", "/opt-outs", { phone: "+14155550123", note: "x".repeat(501) }, "note"],
      ["POST", "/opt-outs", { phone: "+14155550123", source: "keyword" }, "source"],
      ["POST", "/opt-outs", { phone: 14155550123 }, "phone"],
      ["GET", "/opt-outs?limit=0", undefined, "limit"],
      ["GET", "/opt-outs?limit=201", undefined, "limit"],
      ["GET", "/opt-outs?limit=ten", undefined, "limit"],
      ["GET", "/opt-outs?phone=abc", undefined, "phone"],
      ["GET", "/opt-outs?source=api", undefined, "source"],
      ["DELETE", "/opt-outs/abc", undefined, "phone"],
      ["DELETE", `/opt-outs/${"1".repeat(40)}`, undefined, "phone"]
    ]
    for (const [method, path, json, field] of bad) {
      const e = await expectError(await call(ws.test, method, path, json), 400, "invalid_argument")
      expect(e.message, `${method} ${path}`).toContain(field)
    }
    expect((await optOuts(ws)).optOuts).toEqual([])
    expect((await optOuts(ws, "?limit=200")).optOuts).toEqual([])

    const reader = (await app.createKey(ws.workspaceId, { scopes: ["contacts:read"] })).token
    const sender = (await app.createKey(ws.workspaceId, { scopes: ["messages:send"] })).token
    await expectOk(await call(reader, "GET", "/opt-outs"))
    for (
      const [token, method, path, json, scope] of [
        [reader, "POST", "/opt-outs", { phone: "+14155550123" }, "contacts:write"],
        [reader, "DELETE", "/opt-outs/%2B14155550123", undefined, "contacts:write"],
        [sender, "GET", "/opt-outs", undefined, "contacts:read"]
      ] as const
    ) {
      const e = await expectError(await call(token, method, path, json), 403, "permission_denied")
      expect(e.message, `${method} ${path}`).toContain(scope)
    }
    expect((await optOuts(ws)).optOuts).toEqual([])
  })

  it("GET /webhook-events lists both opt-out events", async () => {
    const ws = await workspace("none")
    const { events } = await expectOk(await call(ws.test, "GET", "/webhook-events"))
    for (const type of ["contact.opted_out", "contact.opted_in"] as const) {
      expect(events).toContainEqual({ type, description: catalog[type].description })
    }
  })
})

describe("MCP opt-out tools", () => {
  it("lists opt_outs_list, opt_outs_create and opt_outs_delete with their hints, and runs them", async () => {
    const ws = await workspace("none")
    const client = await mcp(ws.test)
    const listed = (await client.listTools()).tools
    const byName = new Map(listed.map((t) => [t.name, t]))
    expect(byName.get("opt_outs_list")?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    expect(byName.get("opt_outs_create")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
    expect(byName.get("opt_outs_delete")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })

    const created = toolOk(await client.callTool({ name: "opt_outs_create", arguments: { phone: "+14155550166" } }))
    expect(created).toMatchObject({ created: true, optOut: { phone: "+14155550166", source: "api", note: null } })
    expect(toolOk(await client.callTool({ name: "opt_outs_create", arguments: { phone: "4155550166" } }))).toEqual({
      ...created,
      created: false
    })
    expect(toolOk(await client.callTool({ name: "opt_outs_list", arguments: {} }))).toEqual({
      optOuts: [created.optOut],
      nextCursor: null
    })
    expect(toolOk(await client.callTool({ name: "opt_outs_delete", arguments: { phone: "+14155550166" } }))).toEqual({
      deleted: true
    })
    expect(toolError(await client.callTool({ name: "opt_outs_delete", arguments: { phone: "+14155550166" } })).code)
      .toBe("not_found")
    await texted(ws, "+14155550167", "REVOKE")
    expect(toolError(await client.callTool({ name: "opt_outs_delete", arguments: { phone: "+14155550167" } })))
      .toEqual(expect.objectContaining({
        code: "failed_precondition",
        message: "Only the recipient can opt back in, by texting START"
      }))
    expect(toolError(await client.callTool({ name: "opt_outs_create", arguments: { phone: "abc" } })).code).toBe(
      "invalid_argument"
    )
    await client.close()

    // A key without contacts:write is refused the writes.
    const reader = await mcp((await app.createKey(ws.workspaceId, { scopes: ["contacts:read"] })).token)
    expect(
      toolError(await reader.callTool({ name: "opt_outs_create", arguments: { phone: "+14155550168" } })).code
    ).toBe("permission_denied")
    await reader.close()
  })
})
