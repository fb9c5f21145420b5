/**
 * Scheduled messages and broadcasts over HTTP (CONTRACT "Scheduled messages and broadcasts"), with
 * the workspace clock (`POST /test-helpers/clock`) standing in for time: a scheduled message goes
 * at its time and not before, a cancel stops it, a refusal is kept; a broadcast deduplicates,
 * skips opted-out recipients, counts, cancels, and waits for each recipient's quiet hours.
 */
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { createServer, type Server } from "node:http"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_TIMEOUT_MS as CARRIER_TIMEOUT_MS } from "../../adapters/carrier/telnyxClient.ts"
import { ServerConfig } from "../../apps/server/config.ts"
import { Carrier } from "../../core/messaging/carrier.ts"
import { RegistrationGate } from "../../core/registration/gate.ts"
import { IN_FLIGHT_MS, SchedulingEngine } from "../../core/scheduling/engine.ts"
import { makeTestApp } from "../support/app.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { until } from "../support/until.ts"
import { bearer, expectError, expectOk } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>
/** The app of the `describe.each` block running (blocks run one after the other). */
let app: App

/** Webhook deliveries, as received. */
const received: Array<{ headers: Record<string, string>; body: string }> = []
let receiver: Server
beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      received.push({ headers: req.headers as Record<string, string>, body })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done))
})
afterAll(() => new Promise((done) => receiver.close(done)))
const receiverUrl = () => `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`

const call = (token: string, method: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method, headers: bearer(token), ...(json === undefined ? {} : { json }) })

let nextNumber = 300

/** A workspace with a number, a test and a live key; quiet hours as given (default: off, so real time cannot interfere). */
const workspace = async (quietHours: { start: string; end: string } | null = null) => {
  const { key, workspaceId } = await app.createWorkspace("Acme Dental")
  const live = (await app.createKey(workspaceId, { kind: "live" })).token
  const number = `+1217555${String(nextNumber++).padStart(4, "0")}`
  await expectOk(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: number } }), 201)
  await expectOk(await app.admin(`/workspaces/${workspaceId}`, { method: "PATCH", json: { quietHours } }))
  return { workspaceId, test: key, live, number }
}
type Workspace = Awaited<ReturnType<typeof workspace>>

/** Moves the workspace's clock; answers its new now (ms). */
const advance = async (ws: Workspace, seconds: number) =>
  Date.parse(
    (await expectOk(await call(ws.test, "POST", "/test-helpers/clock", { advanceSeconds: seconds }))).clock.now
  )

const localTime = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat("en-US", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(ms)

/** Moves the workspace's clock to the next `hhmm` in `timeZone` (to the minute). */
const advanceTo = async (ws: Workspace, timeZone: string, hhmm: string) => {
  const now = await advance(ws, 1)
  let t = Math.ceil(now / 60_000) * 60_000
  while (localTime(t, timeZone) !== hhmm) t += 60_000
  return advance(ws, Math.ceil((t - now) / 1000))
}

/** Lets the worker (polling every 20 ms) run a few rounds. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

const scheduled = async (ws: Workspace, id: string) =>
  (await expectOk(await call(ws.test, "GET", `/scheduled-messages/${id}`))).scheduledMessage

const broadcastOf = async (ws: Workspace, id: string) =>
  (await expectOk(await call(ws.test, "GET", `/broadcasts/${id}`))).broadcast

const recipients = async (ws: Workspace, id: string, query = "") =>
  (await expectOk(await call(ws.test, "GET", `/broadcasts/${id}/recipients${query}`))).recipients as Array<any>

describe.each(["memory", "sql"] as const)("on the %s stores", (stores) => {
  let close: () => Promise<void>
  beforeAll(async () => {
    if (stores === "memory") {
      app = await makeTestApp({ schedulingWorker: true, webhookWorker: true })
      close = () => app.close()
    } else {
      ;({ app, close } = await makeSqlTestApp("scheduling", { schedulingWorker: true, webhookWorker: true }))
    }
  })
  afterAll(() => close())

  describe("scheduled messages", () => {
    it("go at their time, not before, through the POST /messages path; a cancel stops one; a refusal is kept in failure", async () => {
      const ws = await workspace()
      const now = await advance(ws, 1)
      const sendAt = new Date(now + 10 * 60_000).toISOString()
      const created = (await expectOk(
        await call(ws.test, "POST", "/scheduled-messages", { to: "(415) 555-0123", body: "Cleaning tomorrow", sendAt }),
        201
      )).scheduledMessage
      expect(created).toEqual({
        id: created.id,
        to: "+14155550123",
        from: null,
        conversationId: null,
        body: "Cleaning tomorrow",
        mediaUrls: [],
        sendAt,
        status: "scheduled",
        messageId: null,
        failure: null,
        createdAt: created.createdAt
      })
      const canceled = (await expectOk(
        await call(ws.test, "POST", "/scheduled-messages", {
          to: "+14155550124",
          body: "Never sent",
          sendAt: new Date(now + 20 * 60_000).toISOString()
        }),
        201
      )).scheduledMessage

      await advance(ws, 9 * 60)
      await settle()
      expect((await scheduled(ws, created.id)).status).toBe("scheduled")
      expect((await expectOk(await call(ws.test, "DELETE", `/scheduled-messages/${canceled.id}`))).scheduledMessage)
        .toMatchObject({ id: canceled.id, status: "canceled", failure: null })
      // Canceling again answers the same.
      expect(
        (await expectOk(await call(ws.test, "DELETE", `/scheduled-messages/${canceled.id}`))).scheduledMessage.status
      )
        .toBe("canceled")

      await advance(ws, 61)
      await expect.poll(async () => (await scheduled(ws, created.id)).status, { timeout: 5000 }).toBe("sent")
      const sent = await scheduled(ws, created.id)
      const conversations = (await expectOk(await call(ws.test, "GET", "/conversations"))).conversations as Array<any>
      expect(conversations).toHaveLength(1)
      const thread = await expectOk(await call(ws.test, "GET", `/conversations/${conversations[0].id}`))
      expect(thread.activities).toEqual([
        expect.objectContaining({ id: sent.messageId, body: "Cleaning tomorrow", deliveryStatus: "simulated" })
      ])
      expect((await scheduled(ws, canceled.id)).status).toBe("canceled")
      await expectError(await call(ws.test, "DELETE", `/scheduled-messages/${created.id}`), 409, "failed_precondition")

      // A live key without a texting registration: refused at send time, as POST /messages refuses it now.
      const refusal = (await expectError(
        await call(ws.live, "POST", "/messages", { to: "+14155550125", body: "Hi" }),
        409,
        "failed_precondition"
      )).message
      const live = (await expectOk(
        await call(ws.live, "POST", "/scheduled-messages", {
          to: "+14155550125",
          body: "Hi",
          sendAt: new Date((await advance(ws, 1)) + 60_000).toISOString()
        }),
        201
      )).scheduledMessage
      await advance(ws, 61)
      await expect.poll(async () => (await scheduled(ws, live.id)).status, { timeout: 5000 }).toBe("failed")
      expect((await scheduled(ws, live.id)).failure).toEqual({ code: "failed_precondition", message: refusal })

      const listed = await expectOk(await call(ws.test, "GET", "/scheduled-messages"))
      expect(listed.scheduledMessages.map((m: any) => m.id)).toEqual([created.id, live.id, canceled.id])
      const failed = await expectOk(await call(ws.test, "GET", "/scheduled-messages?status=failed"))
      expect(failed.scheduledMessages.map((m: any) => m.id)).toEqual([live.id])
    })

    it("checks input at once: sendAt from 1 minute to 30 days ahead, one of to or conversationId, the phone, the sending number", async () => {
      const ws = await workspace()
      const now = await advance(ws, 1)
      const at = (ms: number) => new Date(now + ms).toISOString()
      const post = (json: unknown) => call(ws.test, "POST", "/scheduled-messages", json)
      expect(
        (await expectError(await post({ to: "+14155550123", body: "Hi", sendAt: at(30_000) }), 400, "invalid_argument"))
          .message
      )
        .toMatch(/^sendAt: must be at least 1 minute ahead/)
      expect(
        (await expectError(
          await post({ to: "+14155550123", body: "Hi", sendAt: at(31 * 86_400_000) }),
          400,
          "invalid_argument"
        )).message
      )
        .toBe("sendAt: must be at most 30 days ahead")
      await expectError(await post({ to: "+14155550123", body: "Hi", sendAt: "tomorrow" }), 400, "invalid_argument")
      await expectError(await post({ body: "Hi", sendAt: at(120_000) }), 400, "invalid_argument")
      expect(
        (await expectError(await post({ to: "12", body: "Hi", sendAt: at(120_000) }), 400, "invalid_argument")).message
      )
        .toMatch(/^to: /)
      await expectError(
        await post({ to: "+14155550123", from: "+14155550199", body: "Hi", sendAt: at(120_000) }),
        404,
        "not_found"
      )
      await expectError(
        await post({ conversationId: crypto.randomUUID(), body: "Hi", sendAt: at(120_000) }),
        404,
        "not_found"
      )
      await expectError(await call(ws.test, "GET", `/scheduled-messages/${crypto.randomUUID()}`), 404, "not_found")
    })
  })

  describe("broadcasts", () => {
    it("deduplicate phones, contacts and tags, skip and count opted-out recipients, send the rest each in its own thread", async () => {
      const ws = await workspace()
      const ada = (await expectOk(
        await call(ws.test, "POST", "/contacts", { firstName: "Ada", phone: "+14155550131", tags: ["vip"] }),
        201
      )).contact
      const bob =
        (await expectOk(await call(ws.test, "POST", "/contacts", { firstName: "Bob", phone: "+14155550132" }), 201))
          .contact
      await expectOk(await call(ws.test, "POST", "/contacts", { firstName: "No phone", tags: ["vip"] }), 201)
      await expectOk(await call(ws.test, "POST", "/opt-outs", { phone: "+14155550133" }), 201)
      const hook = (await expectOk(
        await call(ws.test, "POST", "/webhooks", { url: receiverUrl(), events: ["broadcast.completed"] }),
        201
      )).webhook
      const created = (await expectOk(
        await call(ws.test, "POST", "/broadcasts", {
          body: "Closed Friday",
          recipients: {
            phones: ["+14155550133", "(415) 555-0132", "+14155550134", "+14155550134"],
            contactIds: [bob.id],
            tags: ["vip"]
          }
        }),
        201
      )).broadcast
      expect(created.counts).toEqual({
        total: 4,
        sent: 0,
        failed: 0,
        skippedOptedOut: 0,
        skippedCanceled: 0,
        pending: 4
      })
      await expect.poll(async () => (await broadcastOf(ws, created.id)).status, { timeout: 10_000 }).toBe("completed")
      const done = await broadcastOf(ws, created.id)
      expect(done.counts).toEqual({ total: 4, sent: 3, failed: 0, skippedOptedOut: 1, skippedCanceled: 0, pending: 0 })
      expect(done.completedAt).not.toBeNull()
      // broadcast.completed, once, signed, with the final counts.
      const completed = () =>
        received.flatMap((r) => {
          // The other block's deliveries are signed with its own endpoint's secret.
          try {
            return [new Webhook(hook.secret).verify(r.body, r.headers) as any]
          } catch {
            return []
          }
        }).filter((e) => e.data.broadcastId === created.id)
      await expect.poll(() => completed().length, { timeout: 5000 }).toBe(1)
      expect(completed()[0]).toMatchObject({
        type: "broadcast.completed",
        data: { broadcastId: created.id, counts: done.counts }
      })
      const list = await recipients(ws, created.id)
      expect(list.map((r) => [r.phone, r.contactId, r.status])).toEqual([
        ["+14155550133", null, "skipped"],
        ["+14155550132", bob.id, "sent"],
        ["+14155550134", null, "sent"],
        ["+14155550131", ada.id, "sent"]
      ])
      expect(list[0].failure.code).toBe("opted_out")
      expect((await recipients(ws, created.id, "?status=skipped")).map((r) => r.phone)).toEqual(["+14155550133"])
      const page = await expectOk(await call(ws.test, "GET", `/broadcasts/${created.id}/recipients?limit=2`))
      const rest = await expectOk(
        await call(ws.test, "GET", `/broadcasts/${created.id}/recipients?limit=2&cursor=${page.nextCursor}`)
      )
      expect([...page.recipients, ...rest.recipients]).toEqual(list)
      const conversations = (await expectOk(await call(ws.test, "GET", "/conversations"))).conversations as Array<any>
      expect(conversations.map((c) => c.participants[0]).sort()).toEqual([
        "+14155550131",
        "+14155550132",
        "+14155550134"
      ])
      await expectError(await call(ws.test, "DELETE", `/broadcasts/${created.id}`), 409, "failed_precondition")
      expect((await expectOk(await call(ws.test, "GET", "/broadcasts"))).broadcasts.map((b: any) => b.id)).toEqual([
        created.id
      ])
    })

    it("cancel before its time skips every recipient; input is checked at once", async () => {
      const ws = await workspace()
      const now = await advance(ws, 1)
      const created = (await expectOk(
        await call(ws.test, "POST", "/broadcasts", {
          body: "Later",
          recipients: { phones: ["+14155550141", "+14155550142"] },
          sendAt: new Date(now + 3_600_000).toISOString()
        }),
        201
      )).broadcast
      expect(created.status).toBe("scheduled")
      const canceled = (await expectOk(await call(ws.test, "DELETE", `/broadcasts/${created.id}`))).broadcast
      expect(canceled).toMatchObject({
        status: "canceled",
        counts: { total: 2, sent: 0, failed: 0, skippedOptedOut: 0, skippedCanceled: 2, pending: 0 }
      })
      expect((await expectOk(await call(ws.test, "DELETE", `/broadcasts/${created.id}`))).broadcast.status).toBe(
        "canceled"
      )
      await advance(ws, 7200)
      await settle()
      expect((await recipients(ws, created.id)).map((r) => r.status)).toEqual(["skipped", "skipped"])
      expect((await expectOk(await call(ws.test, "GET", "/conversations"))).conversations).toEqual([])

      const post = (recipients: unknown) => call(ws.test, "POST", "/broadcasts", { body: "Hi", recipients })
      expect((await expectError(await post({ phones: ["+14155550141", "nope"] }), 400, "invalid_argument")).message)
        .toMatch(/^recipients\.phones\[1\]: /)
      expect((await expectError(await post({ contactIds: [crypto.randomUUID()] }), 400, "invalid_argument")).message)
        .toMatch(/^recipients\.contactIds: no contact /)
      expect((await expectError(await post({ tags: ["nobody"] }), 400, "invalid_argument")).message).toMatch(
        /^recipients: no one/
      )
      const many = Array.from({ length: 10_001 }, (_, i) => `+1415${String(2_000_000 + i).padStart(7, "0")}`)
      await expectError(await post({ phones: many }), 400, "invalid_argument")
      // 10,000 (the most) are taken in one request.
      const most = (await expectOk(
        await call(ws.test, "POST", "/broadcasts", {
          body: "Hi",
          recipients: { phones: many.slice(0, 10_000) },
          sendAt: new Date((await advance(ws, 1)) + 3_600_000).toISOString()
        }),
        201
      )).broadcast
      expect(most.counts.total).toBe(10_000)
      expect((await expectOk(await call(ws.test, "DELETE", `/broadcasts/${most.id}`))).broadcast.counts)
        .toMatchObject({ skippedCanceled: 10_000, pending: 0 })
    })

    it("wait for each recipient's quiet hours: New York's night ends at 08:00 Eastern, Los Angeles' at 08:00 Pacific", async () => {
      const ws = await workspace({ start: "21:00", end: "08:00" })
      await advanceTo(ws, "America/New_York", "01:30")
      const created = (await expectOk(
        await call(ws.test, "POST", "/broadcasts", {
          body: "Good morning",
          recipients: { phones: ["+12125550101", "+12135550101"] }
        }),
        201
      )).broadcast
      expect(created.status).toBe("sending")
      await settle()
      expect((await recipients(ws, created.id)).map((r) => r.status)).toEqual(["pending", "pending"])

      await advanceTo(ws, "America/New_York", "07:59")
      await settle()
      expect((await recipients(ws, created.id)).map((r) => r.status)).toEqual(["pending", "pending"])

      await advanceTo(ws, "America/New_York", "08:00")
      await expect.poll(async () => (await recipients(ws, created.id)).map((r) => r.status), { timeout: 5000 })
        .toEqual(["sent", "pending"])
      await advanceTo(ws, "America/Los_Angeles", "07:59")
      await settle()
      expect((await recipients(ws, created.id)).map((r) => r.status)).toEqual(["sent", "pending"])
      await advanceTo(ws, "America/Los_Angeles", "08:00")
      await expect.poll(async () => (await broadcastOf(ws, created.id)).status, { timeout: 5000 }).toBe("completed")
      expect((await broadcastOf(ws, created.id)).counts).toMatchObject({ sent: 2, pending: 0 })
    })
  })
})

describe("a live text in flight", () => {
  it("is given up as unknown_outcome, never sent again, once its mark runs out (SCHEDULING_IN_FLIGHT_MS)", async () => {
    // A carrier that never answers: the text stays marked in flight, as a process that died mid-send leaves it.
    const handed: Array<string> = []
    const held = await makeTestApp({
      schedulingWorker: true,
      schedulingInFlightMs: 500,
      registration: Layer.succeed(RegistrationGate, { textingState: () => Effect.succeed("approved" as const) }),
      carrier: Layer.succeed(Carrier, {
        send: (message) => Effect.zipRight(Effect.sync(() => handed.push(message.to)), Effect.never),
        answersKeywords: new Set<string>()
      })
    })
    try {
      const { workspaceId } = await held.createWorkspace("Held")
      const live = (await held.createKey(workspaceId, { kind: "live" })).token
      const numbers = `/workspaces/${workspaceId}/numbers`
      await expectOk(await held.admin(numbers, { method: "POST", json: { e164: "+12175550900" } }), 201)
      await expectOk(await held.admin(`/workspaces/${workspaceId}`, { method: "PATCH", json: { quietHours: null } }))
      const created = (await expectOk(
        await held.fetch("/v1/api/broadcasts", {
          method: "POST",
          headers: bearer(live),
          json: { body: "Hi", recipients: { phones: ["+14155550150"] } }
        }),
        201
      )).broadcast
      await until("the text handed to the carrier", () => (handed.length > 0 ? true : undefined))
      // The worker waits on the carrier, so the sweep runs here, as another process's worker runs it.
      const sweep = () => held.runtime.runPromise(Effect.flatMap(SchedulingEngine, (engine) => engine.sweep(false)))
      const recipient = await until("the mark to run out (well before the default minute)", async () => {
        await sweep()
        const res = await held.fetch(`/v1/api/broadcasts/${created.id}/recipients`, { headers: bearer(live) })
        const [r] = (await expectOk(res)).recipients
        return r.status === "failed" ? r : undefined
      }, 20_000)
      expect(recipient.failure.code).toBe("unknown_outcome")
      expect(handed).toEqual(["+14155550150"])
    } finally {
      await held.close()
    }
  })

  it("SCHEDULING_IN_FLIGHT_MS: the minute by default; it must outlast a carrier request's timeout", async () => {
    const configOf = (env: Record<string, string>) =>
      Effect.runPromise(
        Effect.either(Effect.withConfigProvider(ServerConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
      )
    expect(Either.getOrThrow(await configOf({})).schedulingInFlightMs).toBe(IN_FLIGHT_MS)
    expect(Either.getOrThrow(await configOf({ SCHEDULING_IN_FLIGHT_MS: "20000" })).schedulingInFlightMs).toBe(20_000)
    const refused = await configOf({ SCHEDULING_IN_FLIGHT_MS: String(CARRIER_TIMEOUT_MS) })
    expect(Either.isLeft(refused) && String(refused.left)).toContain(
      `Invalid data at SCHEDULING_IN_FLIGHT_MS: "must be more than a carrier request's timeout (${CARRIER_TIMEOUT_MS} ms)"`
    )
  })
})
