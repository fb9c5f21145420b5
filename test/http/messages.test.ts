/**
 * SPEC "Conversations", "Messages", "Events" (message.*) and CONTRACT.md (test helpers, idempotency,
 * media, search, cursors) over HTTP, with the whole app in-process on the memory stores.
 */
import { Effect, Layer } from "effect"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventOutbox } from "../../core/events/outbox.ts"
import { RegistrationGate } from "../../core/registration/gate.ts"
import { makeTestApp } from "../support/app.ts"
import { createEd25519Signer, type FakeTelnyx, inboundPayload, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { bearer, expectError, tick, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

/** Numbers are global to an app: every test takes its own. */
let counter = 0
const freshNumber = () => `+1415555${String(1000 + ++counter).padStart(4, "0")}`
const ADA = "+14155550123"
const BOB = "+14155550124"

const client = (app: App, key: string) => {
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    headers.set("authorization", bearer(key).authorization)
    return app.fetch(`/v1/api${path}`, { ...init, headers })
  }
  return {
    call,
    get: (path: string) => call(path),
    post: (path: string, json: unknown, headers: Record<string, string> = {}) =>
      call(path, { method: "POST", json, headers }),
    patch: (path: string, json: unknown) => call(path, { method: "PATCH", json })
  }
}

const ok = async (res: Response, status: number): Promise<any> => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  return JSON.parse(text)
}

const seedNumber = async (app: App, workspaceId: string, e164: string) => {
  const res = await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } })
  expect(res.status, await res.clone().text()).toBe(201)
}

/** A new workspace with an all-scope test key and (by default) one seeded number. */
const newUser = async (app: App, withNumber = true) => {
  const { workspaceId, key } = await app.createWorkspace("Messages test")
  const number = freshNumber()
  if (withNumber) await seedNumber(app, workspaceId, number)
  return { ws: workspaceId, key, number, c: client(app, key) }
}

const eventsOf = (app: App, ws: string) =>
  app.runtime.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(ws))).then((es) =>
    es.map((e) => ({ type: e.type, data: e.data as any }))
  )

const inbound = (c: ReturnType<typeof client>, json: Record<string, unknown>) =>
  c.post("/test-helpers/inbound-messages", json)

const activityFields = [
  "aiTags",
  "authorUid",
  "body",
  "call",
  "callTranscript",
  "createdAt",
  "deliveryStatus",
  "direction",
  "id",
  "media",
  "type"
]
const summaryFields = [
  "assigneeUid",
  "contactName",
  "id",
  "inboxId",
  "lastActivityAt",
  "numberE164",
  "participants",
  "preview",
  "status",
  "unread"
]

const approved = Layer.succeed(
  RegistrationGate,
  RegistrationGate.of({ textingState: () => Effect.succeed("approved" as const) })
)

let app: App
beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(() => app.close())

// ------------------------------------------------------------------------------------ must-show flows

describe("must-show flows", () => {
  it("(a) a new user with a test key: send, receive, reply, read the thread, search", async () => {
    const { ws, number, c } = await newUser(app)

    const sent = await ok(await c.post("/messages", { to: "(415) 555-0123", body: "Your table for two is ready" }), 201)
    expect(Object.keys(sent).sort()).toEqual(["conversationId", "message", "simulated"])
    expect(sent.simulated).toBe(true)
    expect(sent.conversationId).toMatch(UUID)
    expect(Object.keys(sent.message).sort()).toEqual(activityFields)
    expect(sent.message).toMatchObject({
      type: "message",
      direction: "outbound",
      body: "Your table for two is ready",
      media: [],
      deliveryStatus: "simulated",
      authorUid: null,
      call: null,
      aiTags: [],
      callTranscript: null
    })
    await tick()

    const got = await ok(await inbound(c, { from: ADA, to: number, body: "Thanks, we are on our way" }), 201)
    expect(Object.keys(got).sort()).toEqual(["contactId", "conversationId", "message"])
    expect(got.conversationId).toBe(sent.conversationId)
    expect(got.contactId).toMatch(UUID)
    expect(got.message).toMatchObject({
      direction: "inbound",
      deliveryStatus: "received",
      body: "Thanks, we are on our way"
    })
    await tick()

    const reply = await ok(
      await c.post("/messages", { conversationId: sent.conversationId, body: "See you soon" }),
      201
    )
    expect(reply.conversationId).toBe(sent.conversationId)
    expect(reply.message.deliveryStatus).toBe("simulated")

    const thread = await ok(await c.get(`/conversations/${sent.conversationId}`), 200)
    expect(Object.keys(thread).sort()).toEqual(["activities", "conversation"])
    expect(thread.activities.map((a: any) => [a.direction, a.body])).toEqual([
      ["outbound", "Your table for two is ready"],
      ["inbound", "Thanks, we are on our way"],
      ["outbound", "See you soon"]
    ])
    expect(thread.activities.map((a: any) => a.id)).toEqual([sent.message.id, got.message.id, reply.message.id])
    expect(Object.keys(thread.conversation).sort()).toEqual(summaryFields)
    expect(thread.conversation).toMatchObject({
      id: sent.conversationId,
      numberE164: number,
      participants: [ADA],
      contactName: ADA,
      status: "open",
      assigneeUid: null,
      preview: "See you soon",
      unread: 0,
      lastActivityAt: reply.message.createdAt
    })

    const list = await ok(await c.get("/conversations"), 200)
    expect(list).toEqual({ conversations: [thread.conversation], nextCursor: null })

    const search = await ok(await c.get("/messages/search?q=TABLE"), 200)
    expect(search.results).toEqual([
      {
        activityId: sent.message.id,
        conversationId: sent.conversationId,
        type: "message",
        direction: "outbound",
        body: "Your table for two is ready",
        participants: [ADA],
        numberE164: number,
        createdAt: sent.message.createdAt
      }
    ])
    // prefixes of words only: "o" starts "on" and "our" (inbound), not "for" or "two"
    const o = await ok(await c.get("/messages/search?q=o"), 200)
    expect(o.results.map((r: any) => r.activityId)).toEqual([got.message.id])
    const prefix = await ok(await c.get(`/messages/search?q=${encodeURIComponent("WA")}`), 200)
    expect(prefix.results.map((r: any) => r.activityId)).toEqual([got.message.id])
    // both directions, newest first: "you" (reply), "Your" (first send)
    const two = await ok(await c.get("/messages/search?q=y"), 200)
    expect(two.results.map((r: any) => r.activityId)).toEqual([reply.message.id, sent.message.id])
    // every word must match
    const and = await ok(await c.get(`/messages/search?q=${encodeURIComponent("see soon")}`), 200)
    expect(and.results.map((r: any) => r.activityId)).toEqual([reply.message.id])
    expect((await ok(await c.get(`/messages/search?q=${encodeURIComponent("see table")}`), 200)).results).toEqual([])
    const limited = await ok(await c.get("/messages/search?q=y&limit=1"), 200)
    expect(limited.results.map((r: any) => r.activityId)).toEqual([reply.message.id])

    const types = (await eventsOf(app, ws)).map((e) => e.type)
    expect(types).toEqual(["message.delivered", "message.received", "message.delivered"])
  })

  it("(b) a live key without registration: 409 with the documented reason, nothing stored, no event", async () => {
    const { ws, c } = await newUser(app)
    const live = client(app, (await app.createKey(ws, { kind: "live" })).token)
    const e = await expectError(await live.post("/messages", { to: ADA, body: "hello" }), 409, "failed_precondition")
    expect(e.message).toBe("Texting is not registered: the 10DLC registration is not filed")
    expect(await ok(await c.get("/conversations"), 200)).toEqual({ conversations: [], nextCursor: null })
    expect((await ok(await c.get("/messages/search?q=hello"), 200)).results).toEqual([])
    expect((await ok(await c.get("/contacts"), 200)).contacts).toEqual([])
    expect(await eventsOf(app, ws)).toEqual([])
    // and with no number at all, the number is what is missing
    const bare = await newUser(app, false)
    const bareLive = client(app, (await app.createKey(bare.ws, { kind: "live" })).token)
    const e2 = await expectError(
      await bareLive.post("/messages", { to: ADA, body: "hello" }),
      409,
      "failed_precondition"
    )
    expect(e2.message).toBe("The workspace has no active phone number: add one before texting")
  })

  it("(c) 50 parallel sends with one Idempotency-Key create one message; 49 replay the same body", async () => {
    const { ws, c } = await newUser(app)
    const body = { to: ADA, body: "exactly once" }
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => c.post("/messages", body, { "idempotency-key": "order-1234" }))
    )
    const texts = await Promise.all(answers.map((r) => r.text()))
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(201))
    expect(answers.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(49)
    expect(answers.filter((r) => r.headers.get("idempotency-replayed") === null)).toHaveLength(1)
    const parsed = texts.map((t) => JSON.parse(t))
    for (const p of parsed) expect(p).toEqual(parsed[0])
    const thread = await ok(await c.get(`/conversations/${parsed[0].conversationId}`), 200)
    expect(thread.activities).toHaveLength(1)
    expect((await ok(await c.get("/conversations"), 200)).conversations).toHaveLength(1)
    expect((await eventsOf(app, ws)).map((e) => e.type)).toEqual(["message.delivered"])

    // a later retry replays too; the same key with another body is a 400
    const again = await c.post("/messages", body, { "idempotency-key": "order-1234" })
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect(await ok(again, 201)).toEqual(parsed[0])
    const other = await expectError(
      await c.post("/messages", { ...body, body: "something else" }, { "idempotency-key": "order-1234" }),
      400,
      "invalid_argument"
    )
    expect(other.message).toMatch(/Idempotency-Key/)
    await expectError(await c.post("/messages", body, { "idempotency-key": "k".repeat(256) }), 400, "invalid_argument")
    expect((await c.post("/messages", body, { "idempotency-key": "k".repeat(255) })).status).toBe(201)
    expect((await ok(await c.get(`/conversations/${parsed[0].conversationId}`), 200)).activities).toHaveLength(2)
  })

  it("(c) a send before the workspace has a number is 409, and the same key sends once the number is added (no failure stored)", async () => {
    const { ws, c, number } = await newUser(app, false)
    const body = { to: ADA, body: "Your table is ready" }
    const refused = await expectError(
      await c.post("/messages", body, { "idempotency-key": "order-42" }),
      409,
      "failed_precondition"
    )
    expect(refused.message).toBe("The workspace has no active phone number: add one before texting")
    await seedNumber(app, ws, number)
    const sent = await c.post("/messages", body, { "idempotency-key": "order-42" })
    expect(sent.headers.get("idempotency-replayed")).toBeNull()
    const first = await ok(sent, 201)
    // From now on the key holds that success.
    const replay = await c.post("/messages", body, { "idempotency-key": "order-42" })
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(await ok(replay, 201)).toEqual(first)
    // A 400 is not stored either: the same key with the body fixed runs.
    await expectError(
      await c.post("/messages", { to: "not a phone", body: "x" }, { "idempotency-key": "order-43" }),
      400,
      "invalid_argument"
    )
    expect((await c.post("/messages", { to: BOB, body: "x" }, { "idempotency-key": "order-43" })).status).toBe(201)
  })
})

// ------------------------------------------------------------------------------------ POST /messages validation

describe("POST /messages validation", () => {
  it("body: required, 1 to 1600 characters", async () => {
    const { c } = await newUser(app)
    expect((await c.post("/messages", { to: ADA, body: "x".repeat(1600) })).status).toBe(201)
    const long = await expectError(
      await c.post("/messages", { to: ADA, body: "x".repeat(1601) }),
      400,
      "invalid_argument"
    )
    expect(long.message).toMatch(/body/)
    await expectError(await c.post("/messages", { to: ADA, body: "" }), 400, "invalid_argument")
    await expectError(await c.post("/messages", { to: ADA }), 400, "invalid_argument")
    await expectError(await c.post("/messages", { to: ADA, body: 5 }), 400, "invalid_argument")
  })

  it("more than 10 mediaUrls, an unknown field, both or neither of to and conversationId: 400", async () => {
    const { c } = await newUser(app)
    const urls = Array.from({ length: 11 }, (_, i) => `https://media.example/${i}.png`)
    const many = await expectError(
      await c.post("/messages", { to: ADA, body: "x", mediaUrls: urls }),
      400,
      "invalid_argument"
    )
    expect(many.message).toMatch(/mediaUrls/)
    const unknown = await expectError(
      await c.post("/messages", { to: ADA, body: "x", priority: "high" }),
      400,
      "invalid_argument"
    )
    expect(unknown.message).toMatch(/priority/)
    await expectError(await c.post("/messages", { body: "x" }), 400, "invalid_argument")
    const first = await ok(await c.post("/messages", { to: ADA, body: "x" }), 201)
    await expectError(
      await c.post("/messages", { to: ADA, conversationId: first.conversationId, body: "x" }),
      400,
      "invalid_argument"
    )
    await expectError(await c.post("/messages", { to: "not a number", body: "x" }), 400, "invalid_argument")
    await expectError(
      await c.call("/messages", { method: "POST", body: "{nope", headers: { "content-type": "application/json" } }),
      400,
      "invalid_argument"
    )
  })

  it("conversationId unknown, malformed or of another workspace: 404; from not a workspace number: 404", async () => {
    const { c } = await newUser(app)
    const other = await newUser(app)
    const theirs = await ok(await other.c.post("/messages", { to: ADA, body: "theirs" }), 201)
    for (const conversationId of [crypto.randomUUID(), "not-a-uuid", theirs.conversationId]) {
      await expectError(await c.post("/messages", { conversationId, body: "x" }), 404, "not_found")
    }
    const e = await expectError(await c.post("/messages", { to: ADA, from: other.number, body: "x" }), 404, "not_found")
    expect(e.message).toContain(other.number)
    expect((await ok(await c.get("/conversations"), 200)).conversations).toEqual([])
  })
})

// ------------------------------------------------------------------------------------ MMS

describe("MMS media", () => {
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4])
  const PDF = Buffer.from("%PDF-1.4 menu")
  let server: Server
  let base: string
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/cat.png") res.writeHead(200, { "content-type": "image/png" }).end(PNG)
      else if (req.url === "/menu.pdf") res.writeHead(200, { "content-type": "application/pdf" }).end(PDF)
      else res.writeHead(404).end()
    })
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  })
  afterAll(() => new Promise<void>((done) => server.close(() => done())))

  const download = (url: string) => {
    const u = new URL(url)
    expect(u.origin).toBe("http://test.local")
    return app.fetch(`${u.pathname}${u.search}`)
  }

  it("outbound media are fetched once, stored and returned as signed URLs that serve the bytes with their type", async () => {
    const { c, number } = await newUser(app)
    const sent = await ok(
      await c.post("/messages", { to: ADA, body: "menu", mediaUrls: [`${base}/cat.png`, `${base}/menu.pdf`] }),
      201
    )
    expect(sent.message.media.map((m: any) => [m.contentType, m.size, m.filename])).toEqual([
      ["image/png", PNG.byteLength, "cat.png"],
      ["application/pdf", PDF.byteLength, "menu.pdf"]
    ])
    for (const [i, bytes] of [PNG, PDF].entries()) {
      const url = sent.message.media[i].url as string
      expect(url).toMatch(/^http:\/\/test\.local\/v1\/media\/[^/]+\/[^/?]+\?expires=\d+&signature=[A-Za-z0-9_-]+$/)
      const res = await download(url)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe(i === 0 ? "image/png" : "application/pdf")
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes)
    }
    // the thread shows them too, freshly signed
    const thread = await ok(await c.get(`/conversations/${sent.conversationId}`), 200)
    const media = thread.activities[0].media
    expect(media).toHaveLength(2)
    expect((await download(media[0].url)).status).toBe(200)
    // a tampered signature, another key or no signature: 404
    const u = new URL(sent.message.media[0].url)
    const sig = u.searchParams.get("signature")!
    u.searchParams.set("signature", `${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`)
    await expectError(await download(u.toString()), 404, "not_found")
    const other = new URL(sent.message.media[1].url)
    other.searchParams.set("signature", sig)
    await expectError(await download(other.toString()), 404, "not_found")
    const extended = new URL(sent.message.media[0].url)
    extended.searchParams.set("expires", String(Number(extended.searchParams.get("expires")) + 60))
    await expectError(await download(extended.toString()), 404, "not_found")
    // inbound MMS through the test helper: stored and signed the same way
    const got = await ok(await inbound(c, { from: BOB, to: number, mediaUrls: [`${base}/cat.png`] }), 201)
    expect(got.message.body).toBeNull()
    const res = await download(got.message.media[0].url)
    expect(res.headers.get("content-type")).toBe("image/png")
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PNG)
  })

  it("a media link missing, repeating or garbling expires or signature is the same 404 as a bad signature, with the envelope", async () => {
    const { c } = await newUser(app)
    const sent = await ok(await c.post("/messages", { to: ADA, body: "menu", mediaUrls: [`${base}/cat.png`] }), 201)
    const good = new URL(sent.message.media[0].url)
    const variant = (change: (params: URLSearchParams) => void) => {
      const u = new URL(good)
      change(u.searchParams)
      return u.toString()
    }
    const links = [
      variant((p) => p.delete("expires")),
      variant((p) => p.delete("signature")),
      variant((p) => (p.delete("expires"), p.delete("signature"))),
      variant((p) => p.append("expires", p.get("expires")!)),
      variant((p) => p.append("signature", p.get("signature")!)),
      variant((p) => p.set("expires", "soon")),
      variant((p) => p.set("expires", "")),
      variant((p) => p.set("signature", "x"))
    ]
    for (const link of links) {
      const e = await expectError(await download(link), 404, "not_found")
      expect(e.message, link).toBe("Media not found or link expired")
    }
    expect((await download(good.toString())).status).toBe(200)
  })

  it("a media URL that cannot be fetched is a 400 naming mediaUrls[i]; nothing is stored", async () => {
    const { ws, c } = await newUser(app)
    const e = await expectError(
      await c.post("/messages", { to: ADA, body: "x", mediaUrls: [`${base}/cat.png`, `${base}/missing.png`] }),
      400,
      "invalid_argument"
    )
    expect(e.message).toMatch(/^mediaUrls\[1\]/)
    expect(e.message).toContain("/missing.png")
    const bad = await expectError(
      await c.post("/messages", { to: ADA, body: "x", mediaUrls: ["ftp://example.com/a.png"] }),
      400,
      "invalid_argument"
    )
    expect(bad.message).toMatch(/^mediaUrls\[0\]/)
    expect((await ok(await c.get("/conversations"), 200)).conversations).toEqual([])
    expect(await eventsOf(app, ws)).toEqual([])
  })
})

// ------------------------------------------------------------------------------------ conversations

describe("GET /conversations and PATCH /conversations/{id}", () => {
  /** Five threads, each from its own number, oldest first. */
  const fiveThreads = async () => {
    const user = await newUser(app)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const got = await ok(await inbound(user.c, { from: `+1415555020${i}`, to: user.number, body: `hi ${i}` }), 201)
      ids.push(got.conversationId)
      await tick()
    }
    return { ...user, ids }
  }

  const page = async (c: ReturnType<typeof client>, query: string) => {
    const body = await ok(await c.get(`/conversations${query}`), 200)
    expect(Object.keys(body).sort()).toEqual(["conversations", "nextCursor"])
    return body as { conversations: Array<any>; nextCursor: string | null }
  }

  it("most recent activity first; status filter; cursor pages with an exactly full last page ending in an empty page", async () => {
    const { c, ids } = await fiveThreads()
    const done = ids[2]!
    expect((await ok(await c.patch(`/conversations/${done}`, { status: "done" }), 200)).conversation.status).toBe(
      "done"
    )
    const all = await page(c, "")
    expect(all.conversations.map((t) => t.id)).toEqual([...ids].reverse())
    expect(all.nextCursor).toBeNull()
    expect((await page(c, "?status=done")).conversations.map((t) => t.id)).toEqual([done])
    const open = [...ids].reverse().filter((id) => id !== done)

    const p1 = await page(c, "?status=open&limit=2")
    expect(p1.conversations.map((t) => t.id)).toEqual(open.slice(0, 2))
    expect(p1.nextCursor).toEqual(expect.any(String))
    const p2 = await page(c, `?status=open&limit=2&cursor=${encodeURIComponent(p1.nextCursor!)}`)
    expect(p2.conversations.map((t) => t.id)).toEqual(open.slice(2, 4))
    expect(p2.nextCursor).toEqual(expect.any(String))
    const p3 = await page(c, `?status=open&limit=2&cursor=${encodeURIComponent(p2.nextCursor!)}`)
    expect(p3).toEqual({ conversations: [], nextCursor: null })

    // a modified cursor, or one reused with another filter: 400
    const cursor = p1.nextCursor!
    const mid = Math.floor(cursor.length / 2)
    const modified = `${cursor.slice(0, mid)}${cursor[mid] === "A" ? "B" : "A"}${cursor.slice(mid + 1)}`
    await expectError(
      await c.get(`/conversations?status=open&limit=2&cursor=${encodeURIComponent(modified)}`),
      400,
      "invalid_argument"
    )
    await expectError(
      await c.get(`/conversations?status=done&limit=2&cursor=${encodeURIComponent(cursor)}`),
      400,
      "invalid_argument"
    )
    await expectError(
      await c.get(`/conversations?limit=2&cursor=${encodeURIComponent(cursor)}`),
      400,
      "invalid_argument"
    )
    // another workspace cannot use it either
    const other = await newUser(app)
    await expectError(
      await other.c.get(`/conversations?status=open&limit=2&cursor=${encodeURIComponent(cursor)}`),
      400,
      "invalid_argument"
    )
    for (const q of ["?limit=0", "?limit=101", "?status=closed"]) {
      await expectError(await c.get(`/conversations${q}`), 400, "invalid_argument")
    }
    expect((await page(c, "?limit=100")).conversations).toHaveLength(5)
  })

  it("new activity moves a thread to the top", async () => {
    const { c, ids, number } = await fiveThreads()
    await ok(await inbound(c, { from: "+14155550201", to: number, body: "again" }), 201)
    const all = await page(c, "")
    expect(all.conversations[0].id).toBe(ids[1])
    expect(all.conversations[0]).toMatchObject({ preview: "again", unread: 2 })
  })

  it("PATCH sets status and resets unread; unknown field, bad status: 400; unknown or malformed id: 404", async () => {
    const { c, number } = await newUser(app)
    const got = await ok(await inbound(c, { from: ADA, to: number, body: "one" }), 201)
    await ok(await inbound(c, { from: ADA, to: number, body: "two" }), 201)
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation.unread).toBe(2)
    const done = await ok(await c.patch(`/conversations/${got.conversationId}`, { status: "done" }), 200)
    expect(Object.keys(done)).toEqual(["conversation"])
    expect(Object.keys(done.conversation).sort()).toEqual(summaryFields)
    expect(done.conversation).toMatchObject({ id: got.conversationId, status: "done", unread: 0 })
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation).toMatchObject({
      status: "done",
      unread: 0
    })
    // inbound reopens it and counts as unread
    await ok(await inbound(c, { from: ADA, to: number, body: "three" }), 201)
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation).toMatchObject({
      status: "open",
      unread: 1
    })
    const reopened = await ok(await c.patch(`/conversations/${got.conversationId}`, { status: "open" }), 200)
    expect(reopened.conversation).toMatchObject({ status: "open", unread: 0 })

    const unknown = await expectError(
      await c.patch(`/conversations/${got.conversationId}`, { status: "done", starred: true }),
      400,
      "invalid_argument"
    )
    expect(unknown.message).toMatch(/starred/)
    await expectError(
      await c.patch(`/conversations/${got.conversationId}`, { status: "archived" }),
      400,
      "invalid_argument"
    )
    await expectError(await c.patch(`/conversations/${got.conversationId}`, {}), 400, "invalid_argument")
    await expectError(await c.patch(`/conversations/${crypto.randomUUID()}`, { status: "done" }), 404, "not_found")
    await expectError(await c.patch("/conversations/nope", { status: "done" }), 404, "not_found")
    await expectError(await c.get("/conversations/nope"), 404, "not_found")
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation.status).toBe("open")
  })

  it("another workspace's conversation is 404 everywhere", async () => {
    const mine = await newUser(app)
    const theirs = await newUser(app)
    const got = await ok(await inbound(theirs.c, { from: ADA, to: theirs.number, body: "private" }), 201)
    await expectError(await mine.c.get(`/conversations/${got.conversationId}`), 404, "not_found")
    await expectError(await mine.c.patch(`/conversations/${got.conversationId}`, { status: "done" }), 404, "not_found")
    await expectError(
      await mine.c.post("/messages", { conversationId: got.conversationId, body: "x" }),
      404,
      "not_found"
    )
    expect((await ok(await mine.c.get("/messages/search?q=private"), 200)).results).toEqual([])
    expect((await ok(await mine.c.get("/conversations"), 200)).conversations).toEqual([])
    expect((await ok(await theirs.c.get(`/conversations/${got.conversationId}`), 200)).conversation.status).toBe("open")
  })

  it("a deleted contact leaves its thread under the raw number; the next text creates a fresh contact", async () => {
    const { c, number } = await newUser(app)
    const contact =
      (await ok(await c.post("/contacts", { firstName: "Ada", lastName: "Lovelace", phone: ADA }), 201)).contact
    const got = await ok(await inbound(c, { from: ADA, to: number, body: "hi" }), 201)
    expect(got.contactId).toBe(contact.id)
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation.contactName).toBe(
      "Ada Lovelace"
    )
    await ok(await c.call(`/contacts/${contact.id}`, { method: "DELETE" }), 200)
    const after = await ok(await c.get(`/conversations/${got.conversationId}`), 200)
    expect(after.conversation.contactName).toBe(ADA)
    expect(after.activities).toHaveLength(1)
    const again = await ok(await inbound(c, { from: ADA, to: number, body: "me again" }), 201)
    expect(again.conversationId).toBe(got.conversationId)
    expect(again.contactId).not.toBe(contact.id)
    const fresh = (await ok(await c.get(`/contacts/${again.contactId}`), 200)).contact
    expect(fresh).toMatchObject({ source: "inbound", firstName: null, phones: [{ value: ADA }] })
  })
})

// ------------------------------------------------------------------------------------ search

describe("GET /messages/search", () => {
  it("q is required; limit 1 to 100, default 25; only punctuation is a 400", async () => {
    const { c, number } = await newUser(app)
    for (let i = 0; i < 30; i++) await ok(await inbound(c, { from: ADA, to: number, body: `reservation ${i}` }), 201)
    expect((await ok(await c.get("/messages/search?q=reserv"), 200)).results).toHaveLength(25)
    expect((await ok(await c.get("/messages/search?q=reserv&limit=100"), 200)).results).toHaveLength(30)
    const newest = (await ok(await c.get("/messages/search?q=reservation&limit=3"), 200)).results
    expect(newest.map((r: any) => r.body)).toEqual(["reservation 29", "reservation 28", "reservation 27"])
    expect((await ok(await c.get("/messages/search?q=RESERVATION%2017"), 200)).results.map((r: any) => r.body)).toEqual(
      ["reservation 17"]
    )
    for (const q of ["", "?q=", "?q=x&limit=0", "?q=x&limit=101", "?q=%3F%21"]) {
      await expectError(await c.get(`/messages/search${q}`), 400, "invalid_argument")
    }
  })
})

// ------------------------------------------------------------------------------------ scopes

describe("scopes", () => {
  it("messages:send, conversations:read and conversations:write are enforced with 403 naming the scope", async () => {
    const { ws, number, c } = await newUser(app)
    const got = await ok(await inbound(c, { from: ADA, to: number, body: "hello" }), 201)
    const all = ["contacts:read", "contacts:write", "conversations:read", "conversations:write", "messages:send"]
    const without = async (scope: string) =>
      client(app, (await app.createKey(ws, { kind: "test", scopes: all.filter((s) => s !== scope) })).token)

    const noSend = await without("messages:send")
    expect(
      (await expectError(await noSend.post("/messages", { to: ADA, body: "x" }), 403, "permission_denied")).message
    ).toContain("messages:send")
    const noRead = await without("conversations:read")
    for (const path of ["/conversations", `/conversations/${got.conversationId}`, "/messages/search?q=hello"]) {
      expect((await expectError(await noRead.get(path), 403, "permission_denied")).message).toContain(
        "conversations:read"
      )
    }
    const noWrite = await without("conversations:write")
    const e = await expectError(
      await noWrite.patch(`/conversations/${got.conversationId}`, { status: "done" }),
      403,
      "permission_denied"
    )
    expect(e.message).toContain("conversations:write")
    // a 403 on an idempotent send stores nothing: the same key works once the scope is there
    await expectError(
      await noSend.post("/messages", { to: ADA, body: "x" }, { "idempotency-key": "scoped" }),
      403,
      "permission_denied"
    )
    expect(
      (await c.post("/messages", { to: ADA, body: "x" }, { "idempotency-key": "scoped" })).headers.get(
        "idempotency-replayed"
      )
    ).toBeNull()
    expect((await ok(await c.get(`/conversations/${got.conversationId}`), 200)).conversation.status).toBe("open")
  })
})

// ------------------------------------------------------------------------------------ test helpers

describe("test helpers", () => {
  it("live keys get 403; inbound to a number of another workspace or to no number is 404", async () => {
    const { ws, number, c } = await newUser(app)
    const other = await newUser(app)
    const live = client(app, (await app.createKey(ws, { kind: "live" })).token)
    const e = await expectError(await inbound(live, { from: ADA, to: number, body: "x" }), 403, "permission_denied")
    expect(e.message).toMatch(/test keys/)
    await expectError(
      await live.post("/test-helpers/delivery-status", { activityId: crypto.randomUUID(), status: "delivered" }),
      403,
      "permission_denied"
    )
    await expectError(await inbound(c, { from: ADA, to: other.number, body: "x" }), 404, "not_found")
    await expectError(await inbound(c, { from: ADA, to: "+14155550999", body: "x" }), 404, "not_found")
    await expectError(await inbound(c, { from: ADA, to: number, body: "x", extra: true }), 400, "invalid_argument")
    expect((await ok(await other.c.get("/conversations"), 200)).conversations).toEqual([])
    expect(await eventsOf(app, other.ws)).toEqual([])
  })

  it("delivery-status: simulated -> sent -> delivered; a late sent does not overwrite delivered; unknown or inbound activity 404", async () => {
    const { ws, number, c } = await newUser(app)
    const sent = await ok(await c.post("/messages", { to: ADA, body: "status please" }), 201)
    const status = (activityId: string, s: string) => c.post("/test-helpers/delivery-status", { activityId, status: s })
    expect((await ok(await status(sent.message.id, "sent"), 200)).message).toMatchObject({
      id: sent.message.id,
      deliveryStatus: "sent"
    })
    expect((await ok(await status(sent.message.id, "delivered"), 200)).message.deliveryStatus).toBe("delivered")
    expect((await ok(await status(sent.message.id, "sent"), 200)).message.deliveryStatus).toBe("delivered")
    expect((await ok(await status(sent.message.id, "delivery_failed"), 200)).message.deliveryStatus).toBe("delivered")
    const thread = await ok(await c.get(`/conversations/${sent.conversationId}`), 200)
    expect(thread.activities[0].deliveryStatus).toBe("delivered")
    const info = { conversationId: sent.conversationId, activityId: sent.message.id }
    expect((await eventsOf(app, ws)).map((e) => [e.type, e.data.deliveryStatus])).toEqual([
      ["message.delivered", undefined],
      ["message.delivered", "sent"],
      ["message.delivered", "delivered"]
    ])
    expect((await eventsOf(app, ws))[1]!.data).toMatchObject(info)

    const failing = await ok(await c.post("/messages", { to: BOB, body: "will fail" }), 201)
    expect((await ok(await status(failing.message.id, "sending_failed"), 200)).message.deliveryStatus).toBe("failed")
    const last = (await eventsOf(app, ws)).at(-1)!
    expect(last).toMatchObject({
      type: "message.failed",
      data: { activityId: failing.message.id, deliveryStatus: "sending_failed" }
    })

    const got = await ok(await inbound(c, { from: ADA, to: number, body: "inbound" }), 201)
    await expectError(await status(got.message.id, "delivered"), 404, "not_found")
    await expectError(await status(crypto.randomUUID(), "delivered"), 404, "not_found")
    await expectError(await status("nope", "delivered"), 404, "not_found")
    await expectError(await status(sent.message.id, "teleported"), 400, "invalid_argument")
    // another workspace's message is unknown here
    const other = await newUser(app)
    await expectError(
      await other.c.post("/test-helpers/delivery-status", { activityId: failing.message.id, status: "delivered" }),
      404,
      "not_found"
    )
  })

  it("with testHelpers: false the routes are 404", async () => {
    const off = await makeTestApp({ testHelpers: false })
    try {
      const c = client(off, off.testKey)
      await expectError(await inbound(c, { from: ADA, to: "+14155550100", body: "x" }), 404, "not_found")
      await expectError(
        await c.post("/test-helpers/delivery-status", { activityId: crypto.randomUUID(), status: "delivered" }),
        404,
        "not_found"
      )
    } finally {
      await off.close()
    }
  })
})

// ------------------------------------------------------------------------------------ Telnyx webhooks

describe("Telnyx webhook route", () => {
  const signer = createEd25519Signer()
  let fake: FakeTelnyx
  let telnyxApp: App
  beforeAll(async () => {
    fake = await startFakeTelnyx({ signer })
    telnyxApp = await makeTestApp({ telnyxPublicKey: fake.publicKey, registration: approved })
  })
  afterAll(async () => {
    await telnyxApp.close()
    await fake.stop()
  })

  const post = (rawBody: string, headers: Record<string, string>) =>
    telnyxApp.fetch("/v1/carrier/telnyx", { method: "POST", headers, body: rawBody })
  const deliver = (eventType: string, payload: unknown, options: Parameters<FakeTelnyx["signedWebhook"]>[2] = {}) => {
    const hook = fake.signedWebhook(eventType, payload, options)
    return post(hook.rawBody, hook.headers)
  }

  it("a bad signature or a stale timestamp is 401; malformed JSON is 400; nothing is stored", async () => {
    const { ws, number, c } = await newUser(telnyxApp)
    const payload = inboundPayload({ from: BOB, to: number, text: "forged" })
    await expectError(
      await deliver("message.received", payload, { signer: createEd25519Signer() }),
      401,
      "unauthenticated"
    )
    await expectError(
      await deliver("message.received", payload, { timestamp: Math.floor(Date.now() / 1000) - 1000 }),
      401,
      "unauthenticated"
    )
    const hook = fake.signedWebhook("message.received", payload)
    await expectError(await post(hook.rawBody.replace("forged", "FORGED"), hook.headers), 401, "unauthenticated")
    const { "telnyx-signature-ed25519": _omit, ...unsigned } = hook.headers
    await expectError(await post(hook.rawBody, unsigned), 401, "unauthenticated")
    const now = String(Math.floor(Date.now() / 1000))
    const raw = "{not json"
    await expectError(
      await post(raw, {
        "content-type": "application/json",
        "telnyx-timestamp": now,
        "telnyx-signature-ed25519": signer.sign(now, raw)
      }),
      400,
      "invalid_argument"
    )
    expect((await ok(await c.get("/conversations"), 200)).conversations).toEqual([])
    expect(await eventsOf(telnyxApp, ws)).toEqual([])
  })

  it("without telnyxPublicKey the route is 404", async () => {
    const hook = fake.signedWebhook("message.received", inboundPayload({ from: ADA, to: "+14155550100", text: "hi" }))
    await expectError(
      await app.fetch("/v1/carrier/telnyx", { method: "POST", headers: hook.headers, body: hook.rawBody }),
      404,
      "not_found"
    )
  })
})
