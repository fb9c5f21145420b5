/**
 * CONTRACT "Webhook recovery" over HTTP, with the background worker delivering to a receiver on a
 * real socket, on each store (memory, PGlite, and Postgres when there is one): a delivery retried
 * now (same `webhook-id`, verified by the official `standardwebhooks`, one more attempt on the same
 * row), its refusals (disabled endpoint, attempt in flight, unknown or foreign ids, scope); recovery
 * of an endpoint's failed deliveries since a time, for the events it subscribes to, in its own
 * workspace only, and the bounds of `since`.
 */
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import type { DeliveryRecord } from "../../core/webhooks/model.ts"
import { eventPayload } from "../../core/webhooks/service.ts"
import { eventIdOf, testEventId } from "../../core/webhooks/signing.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { makeTestApp } from "../support/app.ts"
import { freshPglite } from "../support/pglite.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { type Receiver, startReceiver, verify } from "../support/webhooks.ts"
import { bearer, expectError } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const DAY = 86_400_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

/** Polls `read` until `done` holds; the bound only keeps a broken run from hanging. */
const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, what: string): Promise<A> => {
  const stop = Date.now() + 30_000
  for (;;) {
    const a = await read()
    if (done(a)) return a
    if (Date.now() > stop) throw new Error(`still waiting for ${what}: ${JSON.stringify(a)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

interface Stores {
  readonly name: string
  readonly layer: () => Promise<{ stores?: Layer.Layer<any, any, never>; drop: () => Promise<void> }>
}

const postgresUrl = inject("postgresUrl")
const stores: ReadonlyArray<Stores> = [
  { name: "memory", layer: async () => ({ drop: async () => {} }) },
  { name: "PGlite", layer: async () => ({ stores: sqlStores(freshPglite("migrated")), drop: async () => {} }) },
  ...(postgresUrl === null ? [] : [{
    name: "Postgres",
    layer: async () => {
      const db = await freshDatabase(postgresUrl, "webhook_recovery")
      return { stores: sqlStores(Postgres.layer({ url: Redacted.make(db.url) })), drop: () => db.drop() }
    }
  }])
]

describe.each(stores)("webhook recovery on $name", ({ layer }) => {
  let app: App
  let receiver: Receiver
  let drop: () => Promise<void>
  beforeAll(async () => {
    const made = await layer()
    drop = made.drop
    app = await makeTestApp({
      webhookWorker: true,
      webhookPollMs: 20,
      ...(made.stores === undefined ? {} : { stores: made.stores })
    })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await app?.close()
    await receiver?.close()
    await drop?.()
  })

  let key: string
  let workspaceId: string
  beforeEach(async () => {
    const ws = await app.createWorkspace("Recovery")
    key = ws.key
    workspaceId = ws.workspaceId
    receiver.answer = () => ({ status: 200 })
  })

  const callAs = (token: string) => (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    headers.set("authorization", bearer(token).authorization)
    return app.fetch(`/v1/api${path}`, { ...init, headers })
  }
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) => callAs(key)(path, init)
  const ok = async (res: Response, status = 200) => {
    const text = await res.text()
    expect(res.status, text).toBe(status)
    return JSON.parse(text) as any
  }
  const create = async (path: string, json: Record<string, unknown> = {}, as = call) =>
    (await ok(
      await as("/webhooks", { method: "POST", json: { url: receiver.url(path), events: ["*"], ...json } }),
      201
    ))
      .webhook
  const deliveries = async (id: string) => (await ok(await call(`/webhooks/${id}/deliveries`))).deliveries as Array<any>
  const retry = (id: string, deliveryId: string, as = call) =>
    as(`/webhooks/${id}/deliveries/${deliveryId}/retry`, { method: "POST" })
  const recover = (id: string, json: unknown, as = call) => as(`/webhooks/${id}/recover`, { method: "POST", json })
  const to = (path: string) => receiver.got.filter((g) => g.path === path)
  const seed = (ds: ReadonlyArray<DeliveryRecord>) =>
    app.runtime.runPromise(Effect.flatMap(WebhookStore, (s) => s.insertDeliveries(ds)))

  /** A stored delivery of an event to `endpoint`, as fan-out makes it; `patch` sets its state. */
  const stored = (
    endpoint: { id: string },
    ws: string,
    type: string,
    patch: Partial<DeliveryRecord> = {}
  ): DeliveryRecord => {
    const createdAt = patch.createdAt ?? ago(DAY)
    return {
      id: crypto.randomUUID(),
      workspaceId: ws,
      endpointId: endpoint.id,
      eventId: eventIdOf(crypto.randomUUID()),
      eventType: type,
      payload: eventPayload(type, createdAt, { contactId: crypto.randomUUID() }),
      status: "failed",
      attempts: 8,
      responseStatus: 503,
      error: "HTTP 503",
      createdAt,
      lastAttemptAt: createdAt,
      nextAttemptAt: null,
      ...patch
    }
  }

  describe("POST /webhooks/{id}/deliveries/{deliveryId}/retry", () => {
    it("a delivery that used all its attempts is sent again now: same webhook-id and body, verified by standardwebhooks, one more attempt on the same row", async () => {
      receiver.answer = () => ({ status: 503 })
      const w = await create("/retry", { events: ["contact.updated"] })
      await ok(await call("/contacts", { method: "POST", json: { firstName: "Ada" } }), 201)
      await until(async () => to("/retry").length, (n) => n >= 1, "the first attempt")
      // Every retry of the schedule is due on the moved clock: the worker makes them all, each failing.
      await ok(await call("/test-helpers/clock", { method: "POST", json: { advanceSeconds: 200_000 } }))
      const [failed] = await until(() => deliveries(w.id), (ds) => ds[0]?.status === "failed", "all 8 attempts")
      expect(failed).toMatchObject({
        eventType: "contact.updated",
        attempts: 8,
        responseStatus: 503,
        nextAttemptAt: null
      })
      expect(to("/retry")).toHaveLength(8)

      receiver.answer = () => ({ status: 204 })
      const body = await ok(await retry(w.id, failed.id))
      expect(Object.keys(body)).toEqual(["delivery"])
      expect(body.delivery).toMatchObject({
        id: failed.id,
        eventId: failed.eventId,
        status: "succeeded",
        attempts: 9,
        responseStatus: 204,
        error: null,
        nextAttemptAt: null
      })
      expect(Date.parse(body.delivery.lastAttemptAt)).toBeGreaterThan(Date.parse(failed.lastAttemptAt))
      const sent = to("/retry")
      expect(sent).toHaveLength(9)
      const again = sent[8]!
      expect(again.headers["webhook-id"]).toBe(failed.eventId)
      expect(again.body).toBe(sent[0]!.body)
      expect(verify(w.secret, again)).toMatchObject({ type: "contact.updated" })
      // The log: the same one row, now succeeded after 9 attempts.
      expect(await deliveries(w.id)).toEqual([body.delivery])
    })

    it("a delivery waiting for its next retry is sent now, on the same row, and not again by the worker", async () => {
      const w = await create("/waiting")
      const waiting = stored(w, workspaceId, "contact.deleted", {
        status: "pending",
        attempts: 4,
        nextAttemptAt: new Date(Date.now() + 2 * 3_600_000).toISOString()
      })
      await seed([waiting])
      const retried = (await ok(await retry(w.id, waiting.id))).delivery
      expect(retried).toMatchObject({ id: waiting.id, eventId: waiting.eventId, status: "succeeded", attempts: 5 })
      expect(to("/waiting").map((g) => g.headers["webhook-id"])).toEqual([waiting.eventId])
      expect(verify(w.secret, to("/waiting")[0]!).type).toBe("contact.deleted")
      // Past its old retry time on the moved clock: succeeded, so the worker sends nothing more.
      await ok(await call("/test-helpers/clock", { method: "POST", json: { advanceSeconds: 3 * 3600 } }))
      await new Promise((r) => setTimeout(r, 300))
      expect(to("/waiting")).toHaveLength(1)
      expect(await deliveries(w.id)).toEqual([retried])
    })

    it("a succeeded delivery is sent again; a failing retry keeps the retry schedule", async () => {
      const w = await create("/again")
      const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
      expect(delivery.status).toBe("succeeded")
      receiver.answer = () => ({ status: 502 })
      const retried = (await ok(await retry(w.id, delivery.id))).delivery
      expect(retried).toMatchObject({ status: "pending", attempts: 2, responseStatus: 502, error: "HTTP 502" })
      // The schedule's third step: 5 minutes (±10%).
      const wait = Date.parse(retried.nextAttemptAt) - Date.parse(retried.lastAttemptAt)
      expect(wait).toBeGreaterThanOrEqual(270_000)
      expect(wait).toBeLessThanOrEqual(330_000)
      expect(to("/again")).toHaveLength(2)
    })

    it("a disabled endpoint answers 409 and sends nothing; once re-enabled the retry goes out", async () => {
      const w = await create("/disabled")
      const failed = stored(w, workspaceId, "contact.updated")
      await seed([failed])
      await ok(await call(`/webhooks/${w.id}`, { method: "PATCH", json: { status: "disabled" } }))
      const e = await expectError(await retry(w.id, failed.id), 409, "failed_precondition")
      expect(e.message).toMatch(/disabled/)
      expect(e.message).toMatch(/enable/)
      expect(to("/disabled")).toHaveLength(0)
      await ok(await call(`/webhooks/${w.id}`, { method: "PATCH", json: { status: "enabled" } }))
      expect((await ok(await retry(w.id, failed.id))).delivery).toMatchObject({ status: "succeeded", attempts: 9 })
      expect(to("/disabled").map((g) => g.headers["webhook-id"])).toEqual([failed.eventId])
    })

    it("a delivery with an attempt in flight answers 409 and is not sent twice at once", async () => {
      const w = await create("/held")
      const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
      let release = () => {}
      const held = new Promise<void>((r) => (release = r))
      receiver.answer = async () => {
        await held
        return { status: 200 }
      }
      const first = retry(w.id, delivery.id)
      await until(async () => to("/held").length, (n) => n === 2, "the retry to arrive")
      const e = await expectError(await retry(w.id, delivery.id), 409, "failed_precondition")
      expect(e.message).toMatch(/in flight/)
      release()
      expect((await ok(await first)).delivery).toMatchObject({ status: "succeeded", attempts: 2 })
      expect(to("/held")).toHaveLength(2)
    })

    it("404 for an unknown or malformed delivery id, another endpoint's delivery and another workspace's ids", async () => {
      const w = await create("/mine")
      const sibling = await create("/sibling")
      const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
      for (
        const [id, deliveryId] of [[w.id, crypto.randomUUID()], [w.id, "not-a-uuid"], [sibling.id, delivery.id], [
          crypto.randomUUID(),
          delivery.id
        ]]
      ) {
        await expectError(await retry(id!, deliveryId!), 404, "not_found")
      }
      const other = await app.createWorkspace("Intruder")
      const theirs = callAs(other.key)
      const theirHook = await create("/theirs", {}, theirs)
      await expectError(await retry(w.id, delivery.id, theirs), 404, "not_found")
      await expectError(await retry(theirHook.id, delivery.id, theirs), 404, "not_found")
      expect(to("/mine")).toHaveLength(1)
      expect(to("/theirs")).toHaveLength(0)
    })
  })

  describe("POST /webhooks/{id}/recover", () => {
    it("queues the endpoint's failed and retrying deliveries since `since`, for the events it subscribes to, and no other workspace's; the worker sends each with its webhook-id", async () => {
      const w = await create("/recover", { events: ["contact.updated", "contact.deleted"] })
      const all = await create("/all")
      const other = await app.createWorkspace("Other")
      const theirHook = await create("/other", {}, callAs(other.key))

      const queued = [
        stored(w, workspaceId, "contact.updated", { createdAt: ago(2 * DAY) }),
        stored(w, workspaceId, "contact.deleted", { createdAt: ago(DAY) }),
        // Waiting for its sixth attempt, hours away: sent now instead.
        stored(w, workspaceId, "contact.updated", {
          status: "pending",
          attempts: 5,
          nextAttemptAt: new Date(Date.now() + 5 * 3_600_000).toISOString()
        })
      ]
      const kept = [
        stored(w, workspaceId, "contact.updated", { createdAt: ago(4 * DAY) }), // before since
        stored(w, workspaceId, "contact.updated", { status: "succeeded", attempts: 1, responseStatus: 200 }),
        stored(w, workspaceId, "message.received"), // a type the endpoint no longer subscribes to
        stored(all, workspaceId, "contact.updated"), // another endpoint
        stored(theirHook, other.workspaceId, "contact.updated") // another workspace
      ]
      await seed([...queued, ...kept])

      const since = ago(3 * DAY)
      const body = await ok(await recover(w.id, { since }), 202)
      expect(body).toEqual({ queued: 3 })
      await until(async () => to("/recover").length, (n) => n >= 3, "the recovered deliveries")
      const byId = new Map(queued.map((d) => [d.eventId, d]))
      for (const got of to("/recover")) {
        const d = byId.get(String(got.headers["webhook-id"]))!
        expect(d, "a recovered event").toBeDefined()
        expect(got.body).toBe(d.payload)
        expect(verify(w.secret, got).type).toBe(d.eventType)
      }
      expect(new Set(to("/recover").map((g) => g.headers["webhook-id"]))).toEqual(new Set(byId.keys()))
      const log = await until(
        () => deliveries(w.id),
        (ds) => ds.filter((d) => d.status === "succeeded").length === 4,
        "the recovered attempts recorded"
      )
      const after = new Map(log.map((d) => [d.id, d]))
      for (const d of queued) {
        expect(after.get(d.id)).toMatchObject({ status: "succeeded", attempts: d.attempts + 1, responseStatus: 200 })
      }
      for (const d of kept.slice(0, 3)) {
        expect(after.get(d.id)).toMatchObject({ status: d.status, attempts: d.attempts })
      }
      // Nothing more: the other endpoint, the other workspace, a repeat.
      expect(await ok(await recover(w.id, { since }), 202)).toEqual({ queued: 0 })
      await new Promise((r) => setTimeout(r, 300))
      expect(to("/recover")).toHaveLength(3)
      expect(to("/all")).toHaveLength(0)
      expect(to("/other")).toHaveLength(0)
      await expectError(await recover(w.id, { since }, callAs(other.key)), 404, "not_found")
      await expectError(await recover(theirHook.id, { since }), 404, "not_found")
    })

    it("a receiver down while events happen through the API: recover sends every missed event once, and the worker's retries send none again", async () => {
      const w = await create("/down", { events: ["contact.updated", "contact.deleted"] })
      receiver.answer = () => ({ status: 503 })
      // The outage: events made through the API, each failing its first attempt.
      const contacts = await Promise.all(
        ["Ada", "Alan", "Grace"].map(async (firstName, i) =>
          (await ok(await call("/contacts", { method: "POST", json: { firstName, phone: `+1415555020${i}` } }), 201))
            .contact as { id: string }
        )
      )
      for (const c of contacts) {
        await ok(await call(`/contacts/${c.id}`, { method: "PATCH", json: { company: "Acme" } }))
      }
      await ok(await call(`/contacts/${contacts[0]!.id}`, { method: "DELETE" }))
      // contact.updated for each create and each patch, contact.deleted for the delete.
      const events = 7
      const failed = await until(
        () => deliveries(w.id),
        (ds) => ds.length === events && ds.every((d) => d.attempts >= 1 && d.status !== "succeeded"),
        "every event's first attempt refused"
      )
      const missed = new Set(failed.map((d) => d.eventId))
      expect(missed.size).toBe(events)

      // Back up: recover the outage.
      const refusedBefore = to("/down").length
      receiver.answer = () => ({ status: 200 })
      // A first retry (due seconds after its refusal) may come due between the receiver's return and
      // the recovery on a loaded machine, and deliver its event itself: recovery queues the rest.
      const { queued } = await ok(await recover(w.id, { since: ago(3_600_000) }), 202)
      expect(queued).toBeGreaterThan(0)
      expect(queued).toBeLessThanOrEqual(events)
      const log = await until(
        () => deliveries(w.id),
        (ds) => ds.every((d) => d.status === "succeeded"),
        "the recovered deliveries"
      )
      expect(log).toHaveLength(events)
      const delivered = to("/down").slice(refusedBefore)
      expect(delivered.map((g) => g.headers["webhook-id"]).sort()).toEqual([...missed].sort())
      for (const got of delivered) {
        expect(["contact.updated", "contact.deleted"]).toContain(verify(w.secret, got).type)
      }
      // Nothing is sent twice: not by the worker's scheduled retries, not by a second recovery.
      expect(await ok(await recover(w.id, { since: ago(3_600_000) }), 202)).toEqual({ queued: 0 })
      await new Promise((r) => setTimeout(r, 500))
      expect(to("/down").slice(refusedBefore)).toHaveLength(events)
    })

    it("an endpoint on * recovers every catalog type, never a failed test ping", async () => {
      const w = await create("/star")
      const event = stored(w, workspaceId, "call.missed")
      const ping = stored(w, workspaceId, "ping", { eventId: testEventId(crypto.randomUUID()) })
      await seed([event, ping])
      expect(await ok(await recover(w.id, { since: ago(2 * DAY) }), 202)).toEqual({ queued: 1 })
      await until(async () => to("/star").length, (n) => n >= 1, "the recovered event")
      await new Promise((r) => setTimeout(r, 300))
      expect(to("/star").map((g) => g.headers["webhook-id"])).toEqual([event.eventId])
    })

    it("since: a date-time at most 14 days back and not in the future, else 400; a disabled endpoint 409; unknown 404", async () => {
      const w = await create("/bounds")
      const bad = async (json: unknown, pattern: RegExp) => {
        const e = await expectError(await recover(w.id, json), 400, "invalid_argument")
        expect(e.message).toMatch(pattern)
      }
      await bad({ since: ago(15 * DAY) }, /14 days/)
      await bad({ since: new Date(Date.now() + 3_600_000).toISOString() }, /future/)
      await bad({ since: "yesterday" }, /since/)
      await bad({ since: "2026-01-01T10:00:00" }, /since/)
      await bad({}, /since/)
      await bad({ since: ago(DAY), limit: 5 }, /limit/)
      // Exactly 14 days back, as a client computes it just before sending, and an offset other than Z.
      expect(await ok(await recover(w.id, { since: ago(14 * DAY) }), 202)).toEqual({ queued: 0 })
      const local = new Date(Date.now() - DAY - 5 * 3_600_000).toISOString().replace(/\.\d+Z$/, "-05:00")
      expect(await ok(await recover(w.id, { since: local }), 202)).toEqual({ queued: 0 })

      await ok(await call(`/webhooks/${w.id}`, { method: "PATCH", json: { status: "disabled" } }))
      const e = await expectError(await recover(w.id, { since: ago(DAY) }), 409, "failed_precondition")
      expect(e.message).toMatch(/disabled/)
      await expectError(await recover(crypto.randomUUID(), { since: ago(DAY) }), 404, "not_found")
      await expectError(await recover("not-a-uuid", { since: ago(DAY) }), 404, "not_found")
    })

    it("both routes need webhooks:manage: 403 naming the scope, nothing sent or queued", async () => {
      const w = await create("/scoped")
      const failed = stored(w, workspaceId, "contact.updated")
      await seed([failed])
      const limited = await app.createKey(workspaceId, { scopes: ["contacts:read", "contacts:write"] })
      const as = callAs(limited.token)
      for (const res of [await retry(w.id, failed.id, as), await recover(w.id, { since: ago(2 * DAY) }, as)]) {
        const e = await expectError(res, 403, "permission_denied")
        expect(e.message).toContain("webhooks:manage")
      }
      await new Promise((r) => setTimeout(r, 200))
      expect(to("/scoped")).toHaveLength(0)
      expect(await deliveries(w.id)).toMatchObject([{ id: failed.id, status: "failed", attempts: 8 }])
    })
  })
})
