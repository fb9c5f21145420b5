/**
 * The contract of the texting registration's stores (RegistrationStore, AuditLog, WorkspaceClock),
 * run unchanged against memory, PGlite and a real Postgres: a registration read back exactly, every
 * nested field included; put replaces; tenant isolation; the poller's queue (awaiting steps only,
 * least recently updated first, limited); the registry's webhooks finding live registrations by
 * brand or campaign id; the live campaigns with numbers still to assign; the audit log newest first with its JSON detail; the workspace clock
 * accumulating, 20 concurrent advances all counted; and a rolled-back transaction leaving no
 * registration and no audit entry. On SQL, the stored row also passes the record's full decode.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { textingRegistrations } from "../../adapters/sql/tables.ts"
import { AuditLog } from "../../core/audit/store.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import { Registration } from "../../core/registration/record.ts"
import { awaitingSteps, RegistrationStore } from "../../core/registration/store.ts"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { freshE164, number, ts, uuid } from "./stores.contract.ts"

type Ports = RegistrationStore | AuditLog | WorkspaceClock | Transactor | RawRegistration | WorkspaceStore | NumberStore

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A sole proprietor's registration waiting for the PIN: every optional field of the application set. */
const soleProprietor = (workspaceId: string): Registration =>
  Schema.decodeUnknownSync(Registration)({
    workspaceId,
    step: "brand_otp_pending",
    soleProprietor: true,
    mock: false,
    messagingProfileId: null,
    business: {
      entityType: "SOLE_PROPRIETOR",
      displayName: "Ada's Bakery — ✓ ünïcode",
      email: "ada@bakery.example",
      vertical: "RETAIL",
      street: "1 Main St\nSuite \"2\"",
      city: "Springfield",
      state: "IL",
      postalCode: "62701",
      firstName: "Ada",
      lastName: "Lovelace",
      mobilePhone: "(415) 555-0100",
      phone: "+14155550101",
      website: "https://bakery.example",
      country: "US"
    },
    campaignInput: {
      useCase: "MIXED",
      samples: ["Your order is ready, Ada's Bakery. Reply STOP to opt out.", "Fresh bread today! Reply HELP for help."],
      optinMessage: "Ada's Bakery: you are subscribed. Reply STOP to opt out.",
      helpMessage: "Ada's Bakery: reply STOP to opt out, call +14155550101 for help.",
      optinKeywords: "START,YES",
      embeddedLink: false,
      embeddedPhone: true,
      description: "Order updates and occasional offers for customers of Ada's Bakery.",
      messageFlow: "Customers opt in on https://bakery.example/sms with an unchecked consent checkbox.",
      optIn: {
        method: "web_form",
        url: "https://bakery.example/sms",
        location: "Checkout page, below the phone field",
        formConfirmed: true,
        screenshotUrl: "https://bakery.example/sms.png"
      }
    },
    brand: {
      id: null,
      status: "otp_pending",
      identityStatus: "UNVERIFIED",
      failureReasons: ["PIN expired", "Mobile number unreachable"],
      otpSentAt: "2024-01-01T00:00:05.123Z",
      otpMobileLast4: "0100"
    },
    campaign: { id: null, status: "staged", useCase: "MIXED", failureReasons: [], submittedAt: null },
    lastResendAt: ts(7),
    filedAt: ts(1),
    updatedAt: ts(8)
  })

/** A company's registration at `step`, with the registry's ids and last update given. */
const company = (
  workspaceId: string,
  patch: {
    step?: Registration["step"]
    mock?: boolean
    brandId?: string | null
    campaignId?: string | null
    updatedAt?: string
  } = {}
): Registration =>
  Schema.decodeUnknownSync(Registration)({
    workspaceId,
    step: patch.step ?? "campaign_pending",
    soleProprietor: false,
    mock: patch.mock ?? false,
    messagingProfileId: "40017f3e-7e7d-4a1c-9d9c-6a5b0c1d2e3f",
    business: {
      displayName: "Acme",
      email: "owner@acme.example",
      vertical: "TECHNOLOGY",
      street: "2 Side St",
      city: "Austin",
      state: "TX",
      postalCode: "73301",
      companyName: "Acme Inc.",
      ein: "12-3456789"
    },
    campaignInput: {
      description: "Appointment reminders for the customers of Acme Inc.",
      messageFlow: "Customers opt in when they book an appointment at acme.example."
    },
    brand: {
      id: patch.brandId === undefined ? `B${uuid()}` : patch.brandId,
      status: "accepted",
      identityStatus: "VERIFIED",
      failureReasons: [],
      otpSentAt: null,
      otpMobileLast4: null
    },
    campaign: {
      id: patch.campaignId === undefined ? `C${uuid()}` : patch.campaignId,
      status: "pending",
      useCase: "MIXED",
      failureReasons: ["Opt-in unclear", "Sample lacks brand name"],
      submittedAt: ts(3)
    },
    lastResendAt: null,
    filedAt: ts(1),
    updatedAt: patch.updatedAt ?? ts(4)
  })

/** On SQL, a workspace's registration row as the driver gives it; nothing on memory. */
class RawRegistration extends Context.Tag("test/RawRegistration")<
  RawRegistration,
  Option.Option<(workspaceId: string) => Effect.Effect<unknown>>
>() {}

const noRawRows = Layer.succeed(RawRegistration, Option.none())
const sqlRawRows = Layer.effect(
  RawRegistration,
  Effect.map(
    SqlClient.SqlClient,
    (sql) =>
      Option.some((workspaceId: string) =>
        Effect.orDie(sql`SELECT * FROM texting_registrations WHERE workspace_id = ${workspaceId}`).pipe(
          Effect.map((rows) => rows[0])
        )
      )
  )
)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a registration reads back exactly, every nested field included", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        const sole = soleProprietor(uuid())
        const acme = company(uuid())
        // the fixture holds what the decode made of the input: the EIN without its dash, phones as E.164, defaults applied
        assert.strictEqual(acme.business.ein, "123456789")
        assert.strictEqual(sole.business.mobilePhone, "+14155550100")
        assert.strictEqual(acme.campaignInput.optinKeywords, "START")
        yield* store.put(sole)
        yield* store.put(acme)
        assert.deepStrictEqual(yield* store.get(sole.workspaceId), Option.some(sole))
        assert.deepStrictEqual(yield* store.get(acme.workspaceId), Option.some(acme))
        // on SQL, the raw row passes the record schema's full decode and gives the same record
        const rawRow = yield* RawRegistration
        if (Option.isSome(rawRow)) {
          for (const r of [sole, acme]) {
            assert.deepStrictEqual(textingRegistrations.decodeChecked(yield* rawRow.value(r.workspaceId)), r)
          }
        }
      }))

    it.effect("put replaces the workspace's registration; get of another workspace is none", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        const ws = uuid()
        const other = uuid()
        yield* store.put(soleProprietor(ws))
        yield* store.put(soleProprietor(other))
        const accepted: Registration = {
          ...soleProprietor(ws),
          step: "brand_ok",
          brand: {
            ...soleProprietor(ws).brand,
            id: `B${uuid()}`,
            status: "accepted",
            identityStatus: "VERIFIED",
            failureReasons: []
          },
          lastResendAt: null,
          updatedAt: ts(60)
        }
        yield* store.put(accepted)
        assert.deepStrictEqual(yield* store.get(ws), Option.some(accepted))
        assert.deepStrictEqual(yield* store.get(other), Option.some(soleProprietor(other)))
        assert.deepStrictEqual(yield* store.get(uuid()), Option.none())
        // the registry now knows the brand by its new id
        assert.deepStrictEqual(yield* store.byRegistryId("brand", accepted.brand.id!), Option.some(ws))
      }))

    it.effect("awaitingRegistry: only awaiting steps, least recently updated first (then by workspace id), at most limit", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        // older than anything the other tests write, so these lead the queue
        const at = (minute: number) => new Date(Date.UTC(1990, 0, 1, 0, minute, 0, 456)).toISOString()
        const [tieLow, tieHigh] = [uuid(), uuid()].sort() as [string, string]
        const queue = [
          company(uuid(), { step: "campaign_pending", updatedAt: at(1) }),
          company(tieLow, { step: "brand_pending", updatedAt: at(2) }),
          company(tieHigh, { step: "brand_ok", updatedAt: at(2) }),
          company(uuid(), { step: "brand_pending", updatedAt: at(5) })
        ]
        const settled = ([
          "none",
          "profile_ready",
          "brand_failed",
          "brand_otp_pending",
          "campaign_active",
          "campaign_failed"
        ] as const).map((step) => company(uuid(), { step, updatedAt: at(0) }))
        for (const r of [...queue].reverse()) yield* store.put(r)
        for (const r of settled) yield* store.put(r)
        const ids = queue.map((r) => r.workspaceId)
        assert.deepStrictEqual(yield* store.awaitingRegistry(2), ids.slice(0, 2))
        assert.deepStrictEqual(yield* store.awaitingRegistry(4), ids)
        assert.deepStrictEqual(yield* store.awaitingRegistry(0), [])
        const all = yield* store.awaitingRegistry(1000)
        assert.deepStrictEqual(all.slice(0, 4), ids)
        for (const r of settled) assert.notInclude(all, r.workspaceId)
        for (const id of all) {
          const step = Option.getOrThrow(yield* store.get(id)).step
          assert.include(awaitingSteps as ReadonlyArray<string>, step)
        }
        // leaving the awaiting steps leaves the queue; an update moves it to the back
        yield* store.put({ ...queue[0]!, step: "campaign_active", updatedAt: at(10) })
        yield* store.put({ ...queue[1]!, updatedAt: ts(1000) })
        assert.deepStrictEqual(yield* store.awaitingRegistry(2), ids.slice(2, 4))
        const later = yield* store.awaitingRegistry(1000)
        assert.isAbove(later.indexOf(ids[1]!), later.indexOf(ids[3]!))
      }))

    it.effect("awaitingAssignment: live active campaigns with an active, ordered, local number not assigned or failed", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        const numbers = yield* NumberStore
        const workspaces = yield* WorkspaceStore
        /** A workspace with a registration at `step` and numbers of the given kinds. */
        const setUp = (
          step: Registration["step"],
          mock: boolean,
          kinds: ReadonlyArray<
            {
              type?: "local" | "toll_free"
              ordered?: boolean
              status?: string
              assignment?: "pending" | "assigned" | "failed"
            }
          >
        ) =>
          Effect.gen(function*() {
            const id = uuid()
            yield* workspaces.insert({ id, name: "W", billing: defaultBilling, ...defaultTexting, createdAt: ts(0) })
            yield* store.put(company(id, { step, mock }))
            const e164s: Array<string> = []
            for (const k of kinds) {
              const e164 = k.type === "toll_free"
                ? `+1888${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`
                : freshE164()
              yield* numbers.insert(
                id,
                number(e164, { type: k.type ?? "local", status: k.status ?? "active" }),
                uuid(),
                k.ordered ?? true
              )
              if (k.assignment !== undefined) yield* numbers.setCampaignAssignment(e164, k.assignment)
              e164s.push(e164)
            }
            return { id, e164s }
          })
        const unasked = yield* setUp("campaign_active", false, [{ assignment: "assigned" }, {}])
        const pending = yield* setUp("campaign_active", false, [{ assignment: "pending" }])
        const settled = [
          yield* setUp("campaign_active", false, [{ assignment: "assigned" }, { assignment: "failed" }]),
          // A toll-free line, a test number and a suspended number are never assigned.
          yield* setUp("campaign_active", false, [{ type: "toll_free" }, { ordered: false }, { status: "suspended" }]),
          yield* setUp("campaign_active", true, [{}]),
          yield* setUp("campaign_pending", false, [{}])
        ]
        const due = yield* store.awaitingAssignment(100_000)
        assert.include(due, unasked.id)
        assert.include(due, pending.id)
        for (const s of settled) assert.notInclude(due, s.id)
        assert.lengthOf(yield* store.awaitingAssignment(1), 1)
        assert.deepStrictEqual(yield* store.awaitingAssignment(0), [])
        yield* numbers.setCampaignAssignment(unasked.e164s[1]!, "assigned")
        yield* numbers.setCampaignAssignment(pending.e164s[0]!, "failed")
        const after = yield* store.awaitingAssignment(100_000)
        assert.notInclude(after, unasked.id)
        assert.notInclude(after, pending.id)
      }))

    it.effect("byRegistryId finds live registrations by brand and by campaign id, never mock ones or other ids", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        const live = company(uuid())
        const shared = `B${uuid()}`
        const mock = company(uuid(), { mock: true })
        const mockTwin = company(uuid(), { mock: true, brandId: shared, campaignId: live.campaign.id })
        const liveTwin = company(uuid(), { brandId: shared, campaignId: null })
        for (const r of [live, mock, mockTwin, liveTwin]) yield* store.put(r)
        assert.deepStrictEqual(yield* store.byRegistryId("brand", live.brand.id!), Option.some(live.workspaceId))
        assert.deepStrictEqual(yield* store.byRegistryId("campaign", live.campaign.id!), Option.some(live.workspaceId))
        assert.deepStrictEqual(yield* store.byRegistryId("brand", shared), Option.some(liveTwin.workspaceId))
        assert.deepStrictEqual(yield* store.byRegistryId("brand", mock.brand.id!), Option.none())
        assert.deepStrictEqual(yield* store.byRegistryId("campaign", mock.campaign.id!), Option.none())
        // the kinds do not mix, and unknown ids find nothing
        assert.deepStrictEqual(yield* store.byRegistryId("campaign", live.brand.id!), Option.none())
        assert.deepStrictEqual(yield* store.byRegistryId("brand", live.campaign.id!), Option.none())
        assert.deepStrictEqual(yield* store.byRegistryId("brand", `B${uuid()}`), Option.none())
      }))

    it.effect("audit append stamps an id and now; list is newest first, per workspace, with the JSON detail intact", () =>
      Effect.gen(function*() {
        const audit = yield* AuditLog
        const ws = uuid()
        const other = uuid()
        const detail = {
          mock: false,
          step: "brand_pending",
          reasons: ["a", "b ✓"],
          nested: { cents: 2000, ok: true, none: null, list: [{ x: 1 }] }
        }
        const before = new Date().toISOString()
        const filed = yield* audit.append(ws, { actor: "api", action: "registration.filed", detail })
        const after = new Date().toISOString()
        assert.match(filed.id, UUID_V7)
        assert.isTrue(filed.createdAt >= before && filed.createdAt <= after, filed.createdAt)
        assert.deepStrictEqual(filed, {
          id: filed.id,
          workspaceId: ws,
          actor: "api",
          action: "registration.filed",
          detail,
          createdAt: filed.createdAt
        })
        const x = yield* audit.append(other, { actor: "admin", action: "workspace.updated", detail: null })
        const resent = yield* audit.append(ws, {
          actor: "api",
          action: "registration.otp_resent",
          detail: "otp resent"
        }) // a JSON string; maybe the same millisecond as `filed`: the id orders it
        yield* Effect.sleep("3 millis")
        const polled = yield* audit.append(ws, {
          actor: "poller",
          action: "registration.brand_ok",
          detail: [1, "two", { three: 3 }]
        })
        assert.deepStrictEqual(yield* audit.list(ws), [polled, resent, filed])
        assert.deepStrictEqual(yield* audit.list(other), [x])
        assert.deepStrictEqual(yield* audit.list(uuid()), [])
      }))

    it.effect("the clock's offset is 0 until advanced, accumulates per workspace, and counts 20 concurrent advances", () =>
      Effect.gen(function*() {
        const clock = yield* WorkspaceClock
        const ws = uuid()
        const other = uuid()
        assert.strictEqual(yield* clock.offset(ws), 0)
        const day = 24 * 60 * 60 * 1000
        assert.strictEqual(yield* clock.advance(ws, day), day)
        // past 32 bits: 400 days
        assert.strictEqual(yield* clock.advance(ws, 399 * day), 400 * day)
        assert.strictEqual(yield* clock.offset(ws), 400 * day)
        assert.strictEqual(yield* clock.offset(other), 0)
        assert.strictEqual(yield* clock.advance(other, 1), 1)
        assert.strictEqual(yield* clock.offset(ws), 400 * day)
        // concurrent advances of a fresh workspace: every one counted, each answering a distinct running total
        const fresh = uuid()
        const answers = yield* Effect.all(Array.from({ length: 20 }, () => clock.advance(fresh, 7)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual([...answers].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => 7 * (i + 1)))
        assert.strictEqual(yield* clock.offset(fresh), 140)
      }))

    it.effect("a transaction that rolls back leaves no registration and no audit entry", () =>
      Effect.gen(function*() {
        const store = yield* RegistrationStore
        const audit = yield* AuditLog
        const ws = uuid()
        const kept = company(ws, { step: "brand_pending" })
        yield* store.put(kept)
        const keptEntry = yield* audit.append(ws, {
          actor: "api",
          action: "registration.filed",
          detail: { mock: false }
        })
        const fresh = company(uuid(), { step: "brand_pending" })
        const result = yield* Effect.either(
          (yield* Transactor).withTransaction(
            Effect.gen(function*() {
              yield* store.put({ ...kept, step: "brand_failed", updatedAt: ts(99) })
              yield* store.put(fresh)
              yield* audit.append(ws, { actor: "api", action: "registration.failed", detail: {} })
              yield* audit.append(fresh.workspaceId, { actor: "api", action: "registration.filed", detail: {} })
              // inside the transaction its writes are seen
              assert.strictEqual(Option.getOrThrow(yield* store.get(ws)).step, "brand_failed")
              return yield* Effect.fail("declined" as const)
            })
          )
        )
        assert.deepStrictEqual(result._tag === "Left" ? result.left : null, "declined")
        assert.deepStrictEqual(yield* store.get(ws), Option.some(kept))
        assert.deepStrictEqual(yield* store.get(fresh.workspaceId), Option.none())
        assert.deepStrictEqual(yield* audit.list(ws), [keptEntry])
        assert.deepStrictEqual(yield* audit.list(fresh.workspaceId), [])
        assert.notInclude(yield* store.awaitingRegistry(1000), fresh.workspaceId)
      }))
  })

contract("Texting stores: memory", Layer.merge(MemoryStores.layer, noRawRows))

sqlContract({
  name: (db) => `Texting stores: ${db}`,
  adapter: (client) => sqlRawRows.pipe(Layer.provideMerge(sqlStores(client))),
  suite: contract,
  database: "texting"
})
