/**
 * Webhooks in the core (SPEC "Events", CONTRACT.md webhook retries, research §1 Standard Webhooks):
 * signatures checked by the official `standardwebhooks` verifier, secret rotation, the retry
 * policy, the delivery state machine under TestClock over the memory stores with a scripted fake
 * sender, and the outbound-URL guard (SSRF, DNS rebinding).
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes, type Scope } from "../../core/auth/scopes.ts"
import {
  blockedRange,
  HostResolver,
  layerOutboundGuard,
  OutboundGuard,
  parseOutboundUrl
} from "../../core/egress/guard.ts"
import { type DomainEvent, event } from "../../core/events/catalog.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import {
  ATTEMPT_TIMEOUT_MS,
  classify,
  DISABLE_AFTER_MS,
  LEASE_MS,
  MAX_ATTEMPTS,
  nextAttemptAt,
  RETRY_SCHEDULE_SECONDS,
  shouldDisable
} from "../../core/webhooks/policy.ts"
import { layer as WebhooksLayer, MAX_PREVIOUS_SECRETS, Webhooks } from "../../core/webhooks/service.ts"
import { eventIdOf, generateSecret, signatureHeader } from "../../core/webhooks/signing.ts"
import { WebhookSender, WebhookStore } from "../../core/webhooks/store.ts"

// ------------------------------------------------------------------------------------ harness

type Answer = { readonly status: number } | { readonly error: string }
interface Sent {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly at: number
}

const PUBLIC_V4 = "93.184.216.34"
const HOOK = "https://hooks.example.com/switchboard"

/**
 * A fresh world per test: memory stores, a fake sender that records every request and answers
 * from `script` (then 200), and the real URL guard (https, public only) over a fake resolver.
 */
const harness = (options: { readonly sendMs?: number } = {}) => {
  const sent: Array<Sent> = []
  const script: Array<Answer> = []
  const dns = new Map<string, ReadonlyArray<string>>([["hooks.example.com", [PUBLIC_V4]]])
  const lookups: Array<string> = []
  const resolver = Layer.succeed(
    HostResolver,
    HostResolver.of({
      resolve: (host) =>
        Effect.suspend(() => {
          lookups.push(host)
          const found = dns.get(host)
          return found === undefined ? Effect.fail("ENOTFOUND") : Effect.succeed(found)
        })
    })
  )
  const sender = Layer.succeed(
    WebhookSender,
    WebhookSender.of({
      send: (request) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          sent.push({ url: request.url, headers: request.headers, body: request.body, at })
          return script.shift() ?? { status: 200 }
        }).pipe(Effect.delay(options.sendMs ?? 0))
    })
  )
  const layer = WebhooksLayer.pipe(
    Layer.provideMerge(Layer.merge(sender, layerOutboundGuard(false).pipe(Layer.provide(resolver)))),
    Layer.provideMerge(MemoryStores.layer)
  )
  return { sent, script, dns, lookups, layer }
}

const principal = (workspaceId = crypto.randomUUID(), scopes: ReadonlyArray<Scope> = allScopes): Principal => ({
  workspaceId,
  keyId: crypto.randomUUID(),
  kind: "test",
  scopes: new Set(scopes)
})

const append = (workspaceId: string, ...events: ReadonlyArray<DomainEvent>) =>
  Effect.flatMap(EventOutbox, (o) => o.append(workspaceId, events))

const outboxIds = (workspaceId: string) =>
  Effect.flatMap(EventOutbox, (o) => o.list(workspaceId)).pipe(Effect.map((es) => es.map((e) => e.id)))

const contactUpdated = () => event("contact.updated", { contactId: crypto.randomUUID(), change: "created" })
const contactDeleted = () => event("contact.deleted", { contactId: crypto.randomUUID() })

const endpointRecord = (workspaceId: string, id: string) =>
  Effect.flatMap(WebhookStore, (s) => s.getEndpoint(workspaceId, id)).pipe(Effect.map(Option.getOrThrow))

const onlyDelivery = (p: Principal, endpointId: string) =>
  Effect.gen(function*() {
    const ds = yield* (yield* Webhooks).deliveries(p, endpointId, 200)
    assert.strictEqual(ds.length, 1, JSON.stringify(ds))
    return ds[0]!
  })

const headersOf = (s: Sent) => ({
  "webhook-id": s.headers["webhook-id"]!,
  "webhook-timestamp": s.headers["webhook-timestamp"]!,
  "webhook-signature": s.headers["webhook-signature"]!
})

const verifies = (secret: string, s: Sent) => Either.try(() => new Webhook(secret).verify(s.body, headersOf(s)))

const HOUR = 60 * 60 * 1000

// ------------------------------------------------------------------------------------ signing

describe("signing (Standard Webhooks)", () => {
  it("a secret is whsec_ + standard base64 of 32 random bytes, different every time", () => {
    const seen = new Set<string>()
    for (let i = 0; i < 50; i++) {
      const secret = generateSecret()
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.strictEqual(Buffer.from(secret.slice(6), "base64").length, 32)
      seen.add(secret)
    }
    assert.strictEqual(seen.size, 50)
  })

  it.effect("standardwebhooks verifies what we sign, for many generated secrets and bodies", () =>
    Effect.gen(function*() {
      const now = Math.floor(Date.now() / 1000)
      for (let i = 0; i < 40; i++) {
        const secret = generateSecret()
        const id = eventIdOf(crypto.randomUUID())
        const body = JSON.stringify({
          type: "contact.updated",
          timestamp: new Date().toISOString(),
          data: { n: i, text: "héllo ✓ \u2028" }
        })
        const signature = yield* signatureHeader([secret], id, now, body)
        assert.match(signature, /^v1,[A-Za-z0-9+/]+=*$/)
        const parsed = new Webhook(secret).verify(body, {
          "webhook-id": id,
          "webhook-timestamp": String(now),
          "webhook-signature": signature
        })
        assert.deepStrictEqual(parsed, JSON.parse(body))
        // the official signer computes exactly our header
        assert.strictEqual(new Webhook(secret).sign(id, new Date(now * 1000), body), signature)
      }
    }))

  it.effect("a tampered body, timestamp or id, or another secret, fails verification", () =>
    Effect.gen(function*() {
      const secret = generateSecret()
      const id = "evt_0123456789abcdef0123456789abcdef"
      const now = Math.floor(Date.now() / 1000)
      const body =
        "{\"type\":\"contact.deleted\",\"timestamp\":\"2026-08-17T10:00:00.000Z\",\"data\":{\"contactId\":\"x\"}}"
      const signature = yield* signatureHeader([secret], id, now, body)
      const good = { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": signature }
      const wh = new Webhook(secret)
      assert.doesNotThrow(() => wh.verify(body, good))
      assert.throws(() => wh.verify(body.replace("contact.deleted", "contact.updated"), good), /signature/i)
      assert.throws(() => wh.verify(`${body} `, good), /signature/i)
      assert.throws(() => wh.verify(body, { ...good, "webhook-timestamp": String(now - 1) }), /signature/i)
      assert.throws(() => wh.verify(body, { ...good, "webhook-id": `${id}0` }), /signature/i)
      assert.throws(() => new Webhook(generateSecret()).verify(body, good), /signature/i)
      // and a replay far outside the 5-minute tolerance is refused even with a valid signature
      const old = now - 3600
      const oldSig = yield* signatureHeader([secret], id, old, body)
      assert.throws(
        () => wh.verify(body, { ...good, "webhook-timestamp": String(old), "webhook-signature": oldSig }),
        /too old/
      )
    }))

  it.effect("deliveries carry webhook-id/-timestamp/-signature over the exact body; standardwebhooks verifies them", () => {
    const h = harness()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const svc = yield* Webhooks
      const p = principal()
      const created = yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      assert.strictEqual(yield* svc.deliverDue(100, 4), 1)
      assert.strictEqual(h.sent.length, 1)
      const s = h.sent[0]!
      assert.strictEqual(s.url, HOOK)
      assert.strictEqual(s.headers["content-type"], "application/json")
      assert.strictEqual(s.headers["webhook-id"], eventIdOf((yield* outboxIds(p.workspaceId))[0]!))
      assert.strictEqual(s.headers["webhook-timestamp"], String(Math.floor((yield* Clock.currentTimeMillis) / 1000)))
      const verified = verifies(created.secret, s)
      assert.isTrue(Either.isRight(verified), String(Either.isLeft(verified) && verified.left))
      const body = JSON.parse(s.body)
      assert.deepStrictEqual(Object.keys(body), ["type", "timestamp", "data"])
      assert.strictEqual(body.type, "contact.updated")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("rotation: for 24 h both secrets sign (two space-separated signatures), then only the new one", () => {
    const h = harness()
    return Effect.gen(function*() {
      // Set the test clock so the pings' timestamps land near real time, which the verifier checks.
      const real = Date.now()
      const rotatedAt = real - 24 * HOUR + 60_000
      yield* TestClock.setTime(rotatedAt - HOUR)
      const svc = yield* Webhooks
      const p = principal()
      const created = yield* svc.create(p, { url: HOOK, events: ["contact.updated"] })
      yield* TestClock.setTime(rotatedAt)
      const rotated = yield* svc.rotate(p, created.id)
      assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.notStrictEqual(rotated.secret, created.secret)
      assert.strictEqual(rotated.id, created.id)

      // 23 h 58 min after the rotation: still inside the overlap
      yield* TestClock.setTime(real - 60_000)
      yield* svc.test(p, created.id)
      const during = h.sent[0]!
      const sigs = during.headers["webhook-signature"]!.split(" ")
      assert.strictEqual(sigs.length, 2)
      for (const sig of sigs) assert.match(sig, /^v1,[A-Za-z0-9+/]+=*$/)
      assert.isTrue(Either.isRight(verifies(rotated.secret, during)), "new secret verifies during the overlap")
      assert.isTrue(Either.isRight(verifies(created.secret, during)), "old secret verifies during the overlap")

      // 24 h 2 min after the rotation: only the new secret signs
      yield* TestClock.setTime(real + 120_000)
      yield* svc.test(p, created.id)
      const after = h.sent[1]!
      assert.strictEqual(after.headers["webhook-signature"]!.split(" ").length, 1)
      assert.isTrue(Either.isRight(verifies(rotated.secret, after)), "new secret verifies after the overlap")
      const old = verifies(created.secret, after)
      assert.isTrue(Either.isLeft(old) && /No matching signature/.test(String(old.left)), "old secret no longer signs")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a second rotation within 24 h keeps the first replaced secret signing until its own 24 h are up", () => {
    const h = harness()
    return Effect.gen(function*() {
      const real = Date.now()
      const firstRotation = real - 24 * HOUR + 60_000
      const secondRotation = firstRotation + 2 * HOUR
      yield* TestClock.setTime(firstRotation - HOUR)
      const svc = yield* Webhooks
      const p = principal()
      const created = yield* svc.create(p, { url: HOOK, events: ["contact.updated"] })
      yield* TestClock.setTime(firstRotation)
      const first = yield* svc.rotate(p, created.id)
      yield* TestClock.setTime(secondRotation)
      const second = yield* svc.rotate(p, created.id)

      // 23 h 58 min after the first rotation: all three secrets sign
      yield* TestClock.setTime(real - 60_000)
      yield* svc.test(p, created.id)
      const during = h.sent[0]!
      assert.strictEqual(during.headers["webhook-signature"]!.split(" ").length, 3)
      for (
        const [name, secret] of [["original", created.secret], ["first", first.secret], [
          "second",
          second.secret
        ]] as const
      ) {
        assert.isTrue(Either.isRight(verifies(secret, during)), `${name} secret verifies`)
      }

      // 24 h 2 min after the first rotation: the original is retired, the first replacement still signs
      yield* TestClock.setTime(real + 120_000)
      yield* svc.test(p, created.id)
      const later = h.sent[1]!
      assert.strictEqual(later.headers["webhook-signature"]!.split(" ").length, 2)
      assert.isTrue(Either.isLeft(verifies(created.secret, later)), "the original secret no longer signs")
      assert.isTrue(
        Either.isRight(verifies(first.secret, later)),
        "the first replacement signs until 24 h after the second rotation"
      )
      assert.isTrue(Either.isRight(verifies(second.secret, later)))
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("rotating in a loop keeps at most MAX_PREVIOUS_SECRETS old secrets signing, the newest ones", () => {
    const h = harness()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.now() - 60_000)
      const svc = yield* Webhooks
      const p = principal()
      const created = yield* svc.create(p, { url: HOOK, events: ["contact.updated"] })
      const secrets = [created.secret]
      for (let i = 0; i < MAX_PREVIOUS_SECRETS + 5; i++) secrets.push((yield* svc.rotate(p, created.id)).secret)
      yield* svc.test(p, created.id)
      const sent = h.sent[0]!
      assert.strictEqual(sent.headers["webhook-signature"]!.split(" ").length, MAX_PREVIOUS_SECRETS + 1)
      assert.isTrue(
        Either.isRight(verifies(secrets[secrets.length - 1 - MAX_PREVIOUS_SECRETS]!, sent)),
        "the 10th newest old secret signs"
      )
      assert.isTrue(
        Either.isLeft(verifies(secrets[secrets.length - 2 - MAX_PREVIOUS_SECRETS]!, sent)),
        "the 11th is retired early"
      )
    }).pipe(Effect.provide(h.layer))
  })
})

// ------------------------------------------------------------------------------------ policy

describe("retry policy", () => {
  it("schedule: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; 8 attempts", () => {
    assert.deepStrictEqual([...RETRY_SCHEDULE_SECONDS], [0, 5, 300, 1800, 7200, 18000, 36000, 36000])
    assert.strictEqual(MAX_ATTEMPTS, 8)
  })

  it("nextAttemptAt: the schedule's delay with at most ±10% jitter, null after 8 attempts", () => {
    const now = 1_700_000_000_000
    RETRY_SCHEDULE_SECONDS.forEach((base, made) => {
      assert.strictEqual(nextAttemptAt(made, now, 0.5), now + base * 1000, `no jitter at random 0.5 after ${made}`)
      const low = nextAttemptAt(made, now, 0)!
      const high = nextAttemptAt(made, now, 0.999999)!
      assert.strictEqual(low, now + Math.round(base * 900), `-10% after ${made}`)
      assert.approximately(high, now + base * 1100, 10, `+10% after ${made}`)
      for (let i = 0; i < 200; i++) {
        const at = nextAttemptAt(made, now, Math.random())!
        assert.isAtLeast(at, now + base * 900 - 1)
        assert.isAtMost(at, now + base * 1100 + 1)
      }
    })
    assert.isNull(nextAttemptAt(8, now, 0.5))
    assert.isNull(nextAttemptAt(9, now, 0.5))
  })

  it("classify: 2xx succeeds; 3xx fails and is not followed; 410 is Gone; 4xx/5xx and network errors fail", () => {
    for (const status of [200, 201, 202, 204, 299]) {
      assert.deepStrictEqual(classify({ status }), { _tag: "Succeeded", responseStatus: status })
    }
    for (const status of [300, 301, 302, 303, 307, 308]) {
      const o = classify({ status })
      assert.strictEqual(o._tag, "Failed")
      assert.strictEqual(o.responseStatus, status)
      assert.match((o as { error: string }).error, /redirect .*not followed/)
    }
    assert.deepStrictEqual(classify({ status: 410 }), { _tag: "Gone", responseStatus: 410 })
    for (const status of [100, 199, 400, 401, 404, 409, 429, 500, 502, 503, 504]) {
      const o = classify({ status })
      assert.strictEqual(o._tag, "Failed", String(status))
      assert.strictEqual(o.responseStatus, status)
    }
    assert.deepStrictEqual(classify({ error: "ECONNREFUSED" }), {
      _tag: "Failed",
      responseStatus: null,
      error: "ECONNREFUSED"
    })
  })

  it("shouldDisable: only after 5 days of continuous failure", () => {
    assert.strictEqual(DISABLE_AFTER_MS, 5 * 24 * HOUR)
    assert.isFalse(shouldDisable(null, 10 * DISABLE_AFTER_MS))
    assert.isFalse(shouldDisable(1000, 1000 + DISABLE_AFTER_MS - 1))
    assert.isTrue(shouldDisable(1000, 1000 + DISABLE_AFTER_MS))
  })
})

// ------------------------------------------------------------------------------------ delivery state machine

describe("delivery state machine (TestClock, memory stores, fake sender)", () => {
  it.effect("an event fans out only to enabled endpoints of its workspace subscribed to its type or *", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const a = principal()
      const b = principal()
      const updated = yield* svc.create(a, { url: `${HOOK}/updated`, events: ["contact.updated"] })
      const star = yield* svc.create(a, { url: `${HOOK}/star`, events: ["*"] })
      const deleted = yield* svc.create(a, { url: `${HOOK}/deleted`, events: ["contact.deleted"] })
      const off = yield* svc.create(a, { url: `${HOOK}/off`, events: ["contact.updated"] })
      yield* svc.update(a, off.id, { status: "disabled" })
      const other = yield* svc.create(b, { url: `${HOOK}/other`, events: ["*"] })

      // one batch holding an event of each workspace
      yield* append(a.workspaceId, contactUpdated())
      yield* append(b.workspaceId, contactDeleted())
      assert.strictEqual((yield* svc.fanOut(100)).events, 2)
      assert.strictEqual((yield* svc.fanOut(100)).events, 0, "an event is fanned out once")
      const types = (id: string, p = a) => Effect.map(svc.deliveries(p, id, 200), (ds) => ds.map((d) => d.eventType))
      assert.deepStrictEqual(yield* types(updated.id), ["contact.updated"])
      assert.deepStrictEqual(yield* types(star.id), ["contact.updated"], "A's * endpoint gets A's event only")
      assert.deepStrictEqual(yield* types(deleted.id), [], "B's contact.deleted never reaches A")
      assert.deepStrictEqual(yield* types(off.id), [])
      assert.deepStrictEqual(yield* types(other.id, b), ["contact.deleted"], "B's endpoint gets B's event only")

      assert.strictEqual(yield* svc.deliverDue(100, 8), 3)
      const byUrl = Object.fromEntries(h.sent.map((s) => [s.url, JSON.parse(s.body).type]))
      assert.deepStrictEqual(byUrl, {
        [`${HOOK}/star`]: "contact.updated",
        [`${HOOK}/updated`]: "contact.updated",
        [`${HOOK}/other`]: "contact.deleted"
      })
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a failing receiver gets retries at the schedule's times with the same webhook-id, then succeeded", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      h.script.push({ status: 500 }, { error: "ECONNREFUSED" }, { status: 302 }, { status: 503 })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      const start = yield* Clock.currentTimeMillis
      assert.strictEqual(yield* svc.deliverDue(100, 4), 1, "the first attempt is immediate")
      assert.strictEqual(h.sent[0]!.at, start)

      for (let made = 1; made <= 4; made++) {
        const d = yield* onlyDelivery(p, ep.id)
        assert.strictEqual(d.status, "pending")
        assert.strictEqual(d.attempts, made)
        const last = Date.parse(d.lastAttemptAt!)
        const next = Date.parse(d.nextAttemptAt!)
        const base = RETRY_SCHEDULE_SECONDS[made]! * 1000
        assert.isAtLeast(next - last, base * 0.9 - 1, `delay after attempt ${made}`)
        assert.isAtMost(next - last, base * 1.1 + 1, `delay after attempt ${made}`)
        // not a moment early
        yield* TestClock.setTime(next - 1)
        assert.strictEqual(yield* svc.deliverDue(100, 4), 0, `no attempt before it is due (after ${made})`)
        yield* TestClock.setTime(next)
        assert.strictEqual(yield* svc.deliverDue(100, 4), 1, `attempt ${made + 1} when due`)
        assert.strictEqual(h.sent[made]!.at, next)
      }
      const d = yield* onlyDelivery(p, ep.id)
      assert.strictEqual(d.status, "succeeded")
      assert.strictEqual(d.attempts, 5)
      assert.strictEqual(d.responseStatus, 200)
      assert.isNull(d.error)
      assert.isNull(d.nextAttemptAt)
      assert.strictEqual(h.sent.length, 5)
      const ids = new Set(h.sent.map((s) => s.headers["webhook-id"]))
      assert.deepStrictEqual([...ids], [eventIdOf((yield* outboxIds(p.workspaceId))[0]!)])
      assert.strictEqual(new Set(h.sent.map((s) => s.body)).size, 1, "the same body on every attempt")
      // done: nothing more is attempted, ever
      yield* TestClock.adjust("30 days")
      assert.strictEqual(yield* svc.deliverDue(100, 4), 0)
      // a recovering endpoint is healthy again
      assert.isNull((yield* endpointRecord(p.workspaceId, ep.id)).failingSince)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("8 failed attempts make the delivery failed; the last error and status are kept", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["contact.deleted"] })
      for (let i = 0; i < 20; i++) h.script.push({ status: 500 })
      yield* append(p.workspaceId, contactDeleted())
      yield* svc.fanOut(100)
      const start = yield* Clock.currentTimeMillis
      yield* svc.deliverDue(100, 4)
      for (let made = 1; made < 8; made++) {
        const d = yield* onlyDelivery(p, ep.id)
        assert.strictEqual(d.status, "pending", `after ${made}`)
        yield* TestClock.setTime(Date.parse(d.nextAttemptAt!))
        assert.strictEqual(yield* svc.deliverDue(100, 4), 1)
      }
      const d = yield* onlyDelivery(p, ep.id)
      assert.strictEqual(d.status, "failed")
      assert.strictEqual(d.attempts, 8)
      assert.strictEqual(d.responseStatus, 500)
      assert.strictEqual(d.error, "HTTP 500")
      assert.isNull(d.nextAttemptAt)
      assert.strictEqual(h.sent.length, 8)
      // the whole schedule took 0+5s+5m+30m+2h+5h+10h+10h ±10%
      const total = RETRY_SCHEDULE_SECONDS.reduce<number>((s, x) => s + x, 0) * 1000
      const elapsed = h.sent[7]!.at - start
      assert.isAtLeast(elapsed, total * 0.9)
      assert.isAtMost(elapsed, total * 1.1)
      yield* TestClock.adjust("30 days")
      assert.strictEqual(yield* svc.deliverDue(100, 4), 0)
      assert.strictEqual(h.sent.length, 8)
      // 27.6 h of failure is not 5 days: the endpoint stays enabled
      assert.strictEqual((yield* svc.get(p, ep.id)).status, "enabled")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("410 Gone disables the endpoint at once; its other deliveries are not attempted", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      h.script.push({ status: 410 })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      yield* svc.deliverDue(100, 1)
      assert.strictEqual((yield* svc.get(p, ep.id)).status, "disabled")
      const d = yield* onlyDelivery(p, ep.id)
      assert.strictEqual(d.status, "failed")
      assert.strictEqual(d.responseStatus, 410)
      assert.isNull(d.nextAttemptAt)
      // new events are not fanned out to it, nor attempted
      yield* append(p.workspaceId, contactUpdated(), contactDeleted())
      yield* svc.fanOut(100)
      yield* TestClock.adjust("1 day")
      assert.strictEqual(yield* svc.deliverDue(100, 4), 0)
      assert.strictEqual(h.sent.length, 1)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("an endpoint failing continuously for 5 days is disabled", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      for (let i = 0; i < 1000; i++) h.script.push({ error: "ECONNRESET" })
      const t0 = yield* Clock.currentTimeMillis
      // a new event every 12 hours, all failing, retries included
      for (let hour = 0; hour < 5 * 24; hour += 12) {
        yield* TestClock.setTime(t0 + hour * HOUR)
        yield* append(p.workspaceId, contactUpdated())
        yield* svc.fanOut(100)
        yield* svc.deliverDue(100, 4)
        assert.strictEqual((yield* svc.get(p, ep.id)).status, "enabled", `still enabled after ${hour} h`)
        assert.strictEqual((yield* endpointRecord(p.workspaceId, ep.id)).failingSince, new Date(t0).toISOString())
      }
      yield* TestClock.setTime(t0 + DISABLE_AFTER_MS)
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      yield* svc.deliverDue(100, 4)
      assert.strictEqual((yield* svc.get(p, ep.id)).status, "disabled")
      const sentBefore = h.sent.length
      yield* TestClock.adjust("3 days")
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      assert.strictEqual(yield* svc.deliverDue(100, 4), 0)
      assert.strictEqual(h.sent.length, sentBefore)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a success resets the failure clock: 4 days failing, a success, 2 more days failing -> still enabled", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      const t0 = yield* Clock.currentTimeMillis
      const deliverAt = (ms: number, answer: Answer) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(ms)
          h.script.length = 0
          for (let i = 0; i < 100; i++) h.script.push(answer)
          yield* append(p.workspaceId, contactUpdated())
          yield* svc.fanOut(100)
          yield* svc.deliverDue(100, 1)
        })
      yield* deliverAt(t0, { status: 500 })
      assert.strictEqual((yield* endpointRecord(p.workspaceId, ep.id)).failingSince, new Date(t0).toISOString())
      yield* deliverAt(t0 + 4 * 24 * HOUR, { status: 204 })
      assert.isNull((yield* endpointRecord(p.workspaceId, ep.id)).failingSince)
      const t1 = t0 + 4 * 24 * HOUR + HOUR
      yield* deliverAt(t1, { status: 500 })
      yield* deliverAt(t0 + 6 * 24 * HOUR, { status: 500 })
      const record = yield* endpointRecord(p.workspaceId, ep.id)
      assert.strictEqual(record.status, "enabled")
      assert.strictEqual(record.failingSince, new Date(t1).toISOString())
      yield* deliverAt(t1 + DISABLE_AFTER_MS, { status: 500 })
      assert.strictEqual((yield* svc.get(p, ep.id)).status, "disabled")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a disabled endpoint's pending deliveries are not attempted until it is enabled again", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      yield* svc.update(p, ep.id, { status: "disabled" })
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* svc.deliverDue(100, 4), 0)
      assert.strictEqual(h.sent.length, 0)
      assert.strictEqual((yield* onlyDelivery(p, ep.id)).status, "pending")
      yield* svc.update(p, ep.id, { status: "enabled" })
      assert.strictEqual(yield* svc.deliverDue(100, 4), 1)
      assert.strictEqual(h.sent.length, 1)
      assert.strictEqual((yield* onlyDelivery(p, ep.id)).status, "succeeded")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a user's disable is not undone by a failing attempt that was already in flight", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const store = yield* WebhookStore
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      const now = yield* Clock.currentTimeMillis
      const [claimed] = yield* store.claimDue(new Date(now).toISOString(), new Date(now + 60_000).toISOString(), 10)
      // the user disables the endpoint while the attempt is on the wire
      yield* svc.update(p, ep.id, { status: "disabled" })
      h.script.push({ status: 500 })
      yield* svc.attempt(claimed!.delivery, claimed!.endpoint)
      assert.strictEqual((yield* svc.get(p, ep.id)).status, "disabled")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a delivery being attempted stays leased: another worker cannot take it until the lease ends", () => {
    const h = harness({ sendMs: 10_000 })
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const store = yield* WebhookStore
      const p = principal()
      yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      const start = yield* Clock.currentTimeMillis
      const [claimed] = yield* svc.claimDue(10)
      // the worker that claimed it dies: nobody else may claim it before the lease ends
      assert.isAtLeast(LEASE_MS, ATTEMPT_TIMEOUT_MS + 5_000, "a lease outlasts one attempt (DNS check + request)")
      const other = (at: number) =>
        store.claimDue(new Date(at).toISOString(), new Date(at + LEASE_MS).toISOString(), 10)
      assert.deepStrictEqual(yield* other(start + LEASE_MS - 1), [])
      const retaken = yield* other(start + LEASE_MS + 1)
      assert.deepStrictEqual(retaken.map((r) => r.delivery.id), [claimed!.delivery.id])
      assert.strictEqual(retaken[0]!.delivery.eventId, claimed!.delivery.eventId, "same webhook-id when retried")
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("a long batch keeps its lease: no other worker takes a delivery still waiting its turn", () => {
    const h = harness({ sendMs: 14_000 })
    const settle = Effect.promise(() => new Promise((r) => setTimeout(r, 3)))
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const store = yield* WebhookStore
      const p = principal()
      yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* append(p.workspaceId, contactUpdated(), contactUpdated(), contactUpdated())
      yield* svc.fanOut(100)
      // one at a time, 14 s each: the third attempt runs from 28 s to 42 s
      const batch = yield* Effect.fork(svc.deliverDue(3, 1))
      for (let s = 1; s <= 41; s++) {
        yield* TestClock.adjust("1 second")
        yield* settle
        const now = yield* Clock.currentTimeMillis
        const taken = yield* store.claimDue(new Date(now).toISOString(), new Date(now + LEASE_MS).toISOString(), 10)
        assert.deepStrictEqual(taken.map((t) => t.delivery.id), [], `another worker took a leased delivery at ${s} s`)
      }
      for (let i = 0; i < 10 && h.sent.length < 3; i++) {
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      assert.strictEqual(yield* Fiber.join(batch), 3)
      assert.strictEqual(h.sent.length, 3)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("test sends a signed ping with an evt_test_ id now and records it", () => {
    const h = harness()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const svc = yield* Webhooks
      const p = principal()
      const ep = yield* svc.create(p, { url: HOOK, events: ["contact.deleted"] })
      const delivery = yield* svc.test(p, ep.id)
      assert.match(delivery.eventId, /^evt_test_[0-9a-f]{32}$/)
      assert.strictEqual(delivery.eventType, "ping")
      assert.strictEqual(delivery.status, "succeeded")
      assert.strictEqual(delivery.attempts, 1)
      assert.strictEqual(delivery.responseStatus, 200)
      assert.strictEqual(h.sent.length, 1)
      assert.strictEqual(h.sent[0]!.headers["webhook-id"], delivery.eventId)
      const body = verifies(ep.secret, h.sent[0]!)
      assert.isTrue(Either.isRight(body))
      assert.strictEqual((Either.getOrThrow(body) as { type: string }).type, "ping")
      assert.deepStrictEqual((yield* svc.deliveries(p, ep.id, 10)).map((d) => d.id), [delivery.id])
      // a failing ping is retried like any delivery
      h.script.push({ status: 503 })
      const failed = yield* svc.test(p, ep.id)
      assert.strictEqual(failed.status, "pending")
      assert.isNotNull(failed.nextAttemptAt)
      yield* TestClock.setTime(Date.parse(failed.nextAttemptAt!))
      assert.strictEqual(yield* svc.deliverDue(100, 1), 1)
      assert.strictEqual(h.sent[2]!.headers["webhook-id"], failed.eventId)
    }).pipe(Effect.provide(h.layer))
  })
})

// ------------------------------------------------------------------------------------ URL guard

/** Private, loopback, link-local, CGNAT, unspecified, IPv6 special ranges and multicast, with their reasons. */
const blocked: ReadonlyArray<readonly [string, RegExp]> = [
  ["127.0.0.1", /loopback/],
  ["127.255.0.9", /loopback/],
  ["10.0.0.1", /private/],
  ["10.255.255.254", /private/],
  ["172.16.0.1", /private/],
  ["172.31.255.1", /private/],
  ["192.168.1.1", /private/],
  ["169.254.169.254", /linkLocal/],
  ["100.64.0.1", /carrierGradeNat/],
  ["0.0.0.0", /unspecified/],
  ["224.0.0.1", /multicast/],
  ["255.255.255.255", /broadcast/],
  ["::1", /loopback/],
  ["::", /unspecified/],
  ["fc00::1", /uniqueLocal/],
  ["fdff:ffff::1", /uniqueLocal/],
  ["fe80::1", /linkLocal/],
  ["::ffff:127.0.0.1", /IPv4-mapped/],
  ["::ffff:169.254.169.254", /IPv4-mapped/],
  ["::7f00:1", /IPv4-compatible/],
  ["64:ff9b::a00:1", /rfc6052/],
  ["ff02::1", /multicast/]
]

const bracket = (a: string) => (a.includes(":") ? `[${a}]` : a)

const guardHarness = (allowPrivate: boolean) => {
  const dns = new Map<string, ReadonlyArray<string>>()
  const lookups: Array<string> = []
  const layer = layerOutboundGuard(allowPrivate).pipe(
    Layer.provide(
      Layer.succeed(
        HostResolver,
        HostResolver.of({
          resolve: (host) =>
            Effect.suspend(() => {
              lookups.push(host)
              const a = dns.get(host)
              return a === undefined ? Effect.fail("ENOTFOUND") : Effect.succeed(a)
            })
        })
      )
    )
  )
  const check = (url: string) => Effect.flatMap(OutboundGuard, (g) => g.check(url)).pipe(Effect.provide(layer))
  return { dns, lookups, check }
}

const rejects = (
  self: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>,
  why: RegExp,
  what: string
) =>
  Effect.gen(function*() {
    const r = yield* Effect.either(self)
    if (Either.isRight(r)) return assert.fail(`${what} was accepted`)
    assert.strictEqual(r.left._tag, "InvalidArgument", what)
    assert.match(r.left.message, why, what)
    return r.left.message
  })

describe("outbound URL guard (SSRF)", () => {
  it("blockedRange names every non-public range and passes public unicast", () => {
    for (const [address, why] of blocked) assert.match(blockedRange(address) ?? "public", why, address)
    for (const address of ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"]) {
      assert.isNull(blockedRange(address), address)
    }
  })

  it.effect("rejects http, credentials, localhost names and malformed URLs, naming the reason", () =>
    Effect.gen(function*() {
      const g = guardHarness(false)
      g.dns.set("hooks.example.com", [PUBLIC_V4])
      yield* rejects(g.check("http://hooks.example.com/x"), /must use https/, "http")
      yield* rejects(g.check("ftp://hooks.example.com/x"), /must use https/, "ftp")
      yield* rejects(g.check("https://user:pw@hooks.example.com/x"), /credentials/, "credentials")
      yield* rejects(g.check("https://user@hooks.example.com/x"), /credentials/, "user only")
      for (const host of ["localhost", "LOCALHOST", "localhost.", "api.localhost", "x.y.localhost."]) {
        yield* rejects(g.check(`https://${host}/x`), /localhost/, host)
      }
      yield* rejects(g.check("not a url"), /not a valid absolute URL/, "garbage")
      yield* rejects(g.check("/relative"), /not a valid absolute URL/, "relative")
      assert.deepStrictEqual(g.lookups.filter((h) => h.includes("localhost")), [], "localhost never reaches DNS")
    }))

  it.effect("names a refused URL without its credentials, with control characters escaped, capped", () =>
    Effect.gen(function*() {
      const g = guardHarness(false)
      const credentials = yield* rejects(
        g.check("https://ops:hunter2@hooks.example.com/x"),
        /credentials/,
        "credentials"
      )
      assert.strictEqual(
        credentials,
        "url https://hooks.example.com/x is not allowed: credentials in URLs are not accepted"
      )
      const forged = yield* rejects(
        g.check("http://hooks.example.com/x\nlevel=ERROR message=forged"),
        /must use https/,
        "newline"
      )
      assert.include(forged, "/x\\u000alevel=ERROR")
      assert.notInclude(forged, "\n")
      const long = yield* rejects(
        g.check(`ftp://u:p@hooks.example.com/${"\u202e".repeat(1000)}`),
        /must use https/,
        "long"
      )
      assert.isBelow(long.length, 300)
      assert.notInclude(long, "u:p@")
      assert.notInclude(long, "\u202e")
    }))

  it.effect("rejects every private range as a literal, including decimal, hex, octal and short IPv4 forms", () =>
    Effect.gen(function*() {
      const g = guardHarness(false)
      for (const [address, why] of blocked) {
        const message = yield* rejects(g.check(`https://${bracket(address)}/hook`), why, address)
        assert.match(message, /^url https:\/\/.* is not allowed: it points at /)
        const p = yield* Effect.either(parseOutboundUrl(`https://${bracket(address)}:8443/hook`, false))
        assert.isTrue(Either.isLeft(p), `parseOutboundUrl ${address}`)
      }
      for (
        const url of [
          "https://2130706433/",
          "https://0x7f.1/",
          "https://0x7f000001/",
          "https://017700000001/",
          "https://127.1/",
          "https://0/",
          "https://3232235777/",
          "https://0xa9.0xfe.0xa9.0xfe/"
        ]
      ) {
        yield* rejects(g.check(url), /loopback|unspecified|private|linkLocal/, url)
      }
      assert.deepStrictEqual(g.lookups, [], "literals never reach DNS")
    }))

  it.effect("rejects a public-looking name that resolves to any private address (and any mix with one)", () =>
    Effect.gen(function*() {
      const g = guardHarness(false)
      for (const [address, why] of blocked) {
        g.dns.set("innocent.example.com", [address])
        const message = yield* rejects(g.check("https://innocent.example.com/hook"), why, `innocent -> ${address}`)
        assert.include(message, `resolves to`)
        assert.include(message, `(${address})`)
        g.dns.set("innocent.example.com", [PUBLIC_V4, address])
        yield* rejects(g.check("https://innocent.example.com/hook"), why, `innocent -> public + ${address}`)
      }
      g.dns.set("nothing.example.com", [])
      yield* rejects(g.check("https://nothing.example.com/"), /does not resolve/, "no addresses")
      yield* rejects(g.check("https://unknown.example.com/"), /does not resolve \(ENOTFOUND\)/, "NXDOMAIN")
    }))

  it.effect("accepts public addresses, as literals and by name", () =>
    Effect.gen(function*() {
      const g = guardHarness(false)
      g.dns.set("hooks.example.com", [PUBLIC_V4, "2606:2800:220:1:248:1893:25c8:1946"])
      for (
        const url of [
          "https://hooks.example.com/a?b=c",
          `https://${PUBLIC_V4}/x`,
          "https://[2606:4700:4700::1111]/x",
          "https://hooks.example.com:8443/"
        ]
      ) {
        const ok = yield* Effect.either(g.check(url))
        assert.isTrue(Either.isRight(ok), `${url}: ${Either.isLeft(ok) ? ok.left.message : ""}`)
      }
    }))

  it.effect("allowPrivate lifts the scheme and address checks (but still refuses credentials)", () =>
    Effect.gen(function*() {
      const g = guardHarness(true)
      g.dns.set("internal.example.com", ["10.0.0.5"])
      for (
        const url of [
          "http://127.0.0.1:8080/hook",
          "https://localhost/x",
          "http://[::1]:9/x",
          "https://internal.example.com/",
          "https://169.254.169.254/"
        ]
      ) {
        const ok = yield* Effect.either(g.check(url))
        assert.isTrue(Either.isRight(ok), `${url}: ${Either.isLeft(ok) ? ok.left.message : ""}`)
      }
      assert.deepStrictEqual(g.lookups, [])
      yield* rejects(g.check("http://u:p@127.0.0.1/"), /credentials/, "credentials")
      yield* rejects(g.check("ftp://127.0.0.1/"), /https/, "ftp")
    }))

  it.effect("create refuses private targets and stores nothing", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      h.dns.set("evil.example.com", ["169.254.169.254"])
      yield* rejects(
        svc.create(p, { url: "https://evil.example.com/hook", events: ["*"] }),
        /linkLocal.*169\.254\.169\.254/,
        "metadata by name"
      )
      yield* rejects(
        svc.create(p, { url: "https://[::ffff:127.0.0.1]/", events: ["*"] }),
        /IPv4-mapped/,
        "mapped literal"
      )
      yield* rejects(svc.create(p, { url: "http://hooks.example.com/", events: ["*"] }), /https/, "http")
      const ep = yield* svc.create(p, { url: HOOK, events: ["*"] })
      yield* rejects(svc.update(p, ep.id, { url: "https://2130706433/" }), /loopback/, "patch to loopback")
      assert.deepStrictEqual((yield* svc.list(p)).map((e) => e.url), [HOOK])
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("DNS rebinding: public at registration, private at delivery -> the attempt fails with the reason, nothing is sent", () => {
    const h = harness()
    return Effect.gen(function*() {
      const svc = yield* Webhooks
      const p = principal()
      h.dns.set("rebind.example.com", [PUBLIC_V4])
      const ep = yield* svc.create(p, { url: "https://rebind.example.com/hook", events: ["*"] })
      h.dns.set("rebind.example.com", ["127.0.0.1"])
      yield* append(p.workspaceId, contactUpdated())
      yield* svc.fanOut(100)
      assert.strictEqual(yield* svc.deliverDue(100, 4), 1)
      assert.strictEqual(h.sent.length, 0, "nothing was sent to the rebound address")
      const d = yield* onlyDelivery(p, ep.id)
      assert.strictEqual(d.status, "pending")
      assert.strictEqual(d.attempts, 1)
      assert.isNull(d.responseStatus)
      assert.match(d.error!, /resolves to a loopback address \(127\.0\.0\.1\)/)
      // when the name points back at a public address, the retry goes out
      h.dns.set("rebind.example.com", [PUBLIC_V4])
      yield* TestClock.setTime(Date.parse(d.nextAttemptAt!))
      yield* svc.deliverDue(100, 4)
      assert.strictEqual(h.sent.length, 1)
      assert.strictEqual((yield* onlyDelivery(p, ep.id)).status, "succeeded")
    }).pipe(Effect.provide(h.layer))
  })
})
