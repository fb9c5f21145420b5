/**
 * Webhook secrets sealed at rest (adapters/sql/secrets.ts): the sealer itself, what the SQL store
 * writes, the boot check that every process uses one key, sealing of secrets stored before sealing
 * existed, and where the key comes from.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { Cause, Context, Effect, Exit, Layer, Logger, Option, type Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as PgliteClient from "../../adapters/pglite/PgliteClient.ts"
import * as Secrets from "../../adapters/sql/secrets.ts"
import type { EndpointRecord } from "../../core/webhooks/model.ts"
import { generateSecret } from "../../core/webhooks/signing.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { sqlStoresWithKey } from "../support/sqlStores.ts"

const key = () => crypto.getRandomValues(new Uint8Array(Secrets.KEY_BYTES))

const endpoint = (): EndpointRecord => ({
  id: crypto.randomUUID(),
  workspaceId: crypto.randomUUID(),
  url: "https://hooks.example.com/a",
  events: ["*"],
  label: null,
  status: "enabled",
  apiVersion: null,
  createdAt: new Date().toISOString(),
  secret: generateSecret(),
  previousSecrets: [{ secret: generateSecret(), expiresAt: new Date(Date.now() + 60_000).toISOString() }],
  failingSince: null
})

describe("the sealer", () => {
  const sealer = Secrets.makeSealer(key())
  const secret = generateSecret()

  it("opens what it sealed, for the same context only", () => {
    const sealed = sealer.seal(secret, "ctx:a")
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/)
    expect(sealed).not.toContain(secret.slice(6))
    expect(sealer.open(sealed, "ctx:a")).toBe(secret)
    expect(() => sealer.open(sealed, "ctx:b")).toThrow()
  })

  it("seals the same secret differently each time (a fresh nonce)", () => {
    expect(sealer.seal(secret, "ctx")).not.toBe(sealer.seal(secret, "ctx"))
  })

  it("refuses another key, a changed byte, a cut tag and malformed values", () => {
    const sealed = sealer.seal(secret, "ctx")
    expect(() => Secrets.makeSealer(key()).open(sealed, "ctx")).toThrow()
    const [v, iv, body] = sealed.split(".")
    const bytes = Buffer.from(body!, "base64url")
    bytes[0] = bytes[0]! ^ 1
    expect(() => sealer.open(`${v}.${iv}.${bytes.toString("base64url")}`, "ctx")).toThrow()
    // Node accepts a 4-byte GCM tag unless told the length
    const whole = Buffer.from(body!, "base64url")
    expect(() => sealer.open(`${v}.${iv}.${whole.subarray(0, whole.length - 12).toString("base64url")}`, "ctx")).toThrow()
    expect(() => sealer.open(`${sealed}.x`, "ctx")).toThrow()
    expect(() => sealer.open("v1..", "ctx")).toThrow()
    expect(() => sealer.open("c2VjcmV0", "ctx")).toThrow()
  })

  it("returns a plain whsec_ secret as it is (written by a version without sealing)", () => {
    expect(sealer.open(secret, "ctx")).toBe(secret)
  })

  it("needs a 32-byte key", () => {
    expect(() => Secrets.makeSealer(new Uint8Array(16))).toThrow(/32 bytes/)
  })
})

describe("sealed webhook secrets in the SQL store (PGlite)", () => {
  /** The stores as a process with key `k` (and `previous`) builds them: migrations, the key check, sealing at boot. */
  const stores = sqlStoresWithKey
  /** Runs `program` over one fresh in-memory database. */
  const onOneDatabase = <A, E>(program: Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>) =>
    Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(PgliteClient.layer({}))))

  it("stores no secret in the clear and reads back the record it was given", () =>
    onOneDatabase(
      Effect.gen(function* () {
        const store = Context.get(yield* Layer.build(stores(key())), WebhookStore)
        const sql = yield* SqlClient.SqlClient
        const e = endpoint()
        yield* store.insertEndpoint(e)
        const [raw] = yield* sql<{ secret: string; all: string }>`SELECT secret, secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(raw!.secret).toMatch(/^v1\./)
        expect(raw!.all).not.toContain("whsec_")
        expect(Option.getOrThrow(yield* store.getEndpoint(e.workspaceId, e.id))).toEqual(e)
        const rotated = { ...e, secret: generateSecret(), previousSecrets: [{ secret: e.secret, expiresAt: e.createdAt }] }
        yield* store.updateEndpoint(rotated)
        expect(yield* store.listEndpoints(e.workspaceId)).toEqual([rotated])
        const [after] = yield* sql<{ all: string }>`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(after!.all).not.toContain("whsec_")
      })
    ))

  it("a process with another key fails at boot; secrets stored in the clear are sealed once, at boot", () =>
    onOneDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = key()
        yield* Layer.build(stores(first))
        // A row as a version without sealing wrote it.
        const legacy = endpoint()
        yield* sql`INSERT INTO webhook_endpoints (workspace_id, id, url, events, label, status, api_version, secret, previous_secrets, failing_since, created_at)
          VALUES (${legacy.workspaceId}, ${legacy.id}, ${legacy.url}, '["*"]'::jsonb, NULL, 'enabled', NULL, ${legacy.secret},
                  ${JSON.stringify(legacy.previousSecrets)}::jsonb, NULL, ${legacy.createdAt}::timestamptz)`

        const other = yield* Effect.exit(Layer.build(stores(key())))
        expect(Exit.isFailure(other) ? Cause.pretty(other.cause) : "booted").toMatch(/not the key this database's webhook secrets are sealed with/)

        const store = Context.get(yield* Layer.build(stores(first)), WebhookStore)
        const [raw] = yield* sql<{ all: string }>`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(raw!.all).not.toContain("whsec_")
        expect(Option.getOrThrow(yield* store.getEndpoint(legacy.workspaceId, legacy.id))).toEqual(legacy)

        // Without the fingerprint row, a sealed secret that does not open still stops another key.
        yield* sql`DELETE FROM settings WHERE name = 'secrets_key_check'`
        const unchecked = yield* Effect.exit(Layer.build(stores(key())))
        expect(Exit.isFailure(unchecked) ? Cause.pretty(unchecked.cause) : "booted").toMatch(/not the key this database's webhook secrets are sealed with/)
      })
    ))

  it("a new key with the old one as previous seals every secret again at boot; then the old key is refused", () =>
    onOneDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [oldKey, newKey] = [key(), key()]
        const e = endpoint()
        yield* Context.get(yield* Layer.build(stores(oldKey)), WebhookStore).insertEndpoint(e)
        const stored = () => sql<{ all: string }>`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`.pipe(Effect.map((rs) => rs[0]!.all))
        const before = yield* stored()

        const changing = Context.get(yield* Layer.build(stores(newKey, oldKey)), WebhookStore)
        expect(yield* stored()).not.toBe(before)
        expect(Option.getOrThrow(yield* changing.getEndpoint(e.workspaceId, e.id))).toEqual(e)

        // Every secret now opens under the new key alone, and the old key no longer boots.
        const after = Context.get(yield* Layer.build(stores(newKey)), WebhookStore)
        expect(Option.getOrThrow(yield* after.getEndpoint(e.workspaceId, e.id))).toEqual(e)
        const old = yield* Effect.exit(Layer.build(stores(oldKey)))
        expect(Exit.isFailure(old) ? Cause.pretty(old.cause) : "booted").toMatch(/not the key this database's webhook secrets are sealed with/)
      })
    ))

  it("an endpoint whose secret does not open holds back only its own deliveries", () =>
    onOneDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = Context.get(yield* Layer.build(stores(key())), WebhookStore)
        const [good, bad] = [endpoint(), endpoint()]
        yield* store.insertEndpoint(good)
        yield* store.insertEndpoint(bad)
        // `bad` gets a secret sealed for another endpoint: it cannot be opened as its own.
        yield* sql`UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = ${good.id}) WHERE id = ${bad.id}`
        const delivery = (e: EndpointRecord) => ({
          id: crypto.randomUUID(), workspaceId: e.workspaceId, endpointId: e.id, eventId: `evt_${crypto.randomUUID()}`, eventType: "contact.updated",
          payload: "{}", status: "pending" as const, attempts: 0, responseStatus: null, error: null, createdAt: e.createdAt, lastAttemptAt: null,
          nextAttemptAt: e.createdAt
        })
        yield* store.insertDeliveries([delivery(good), delivery(bad)])
        const now = new Date().toISOString()
        const claimed = yield* store.claimDue(now, new Date(Date.now() + 60_000).toISOString(), 10)
        expect(claimed.map((c) => c.endpoint.id)).toEqual([good.id])
        expect(claimed[0]!.endpoint.secret).toBe(good.secret)
        // fan-out reads no secrets, so both still subscribe
        expect((yield* store.enabledEndpoints([good.workspaceId, bad.workspaceId])).map((e) => e.id).sort()).toEqual([good.id, bad.id].sort())
      })
    ))
})

describe("the key", () => {
  const dirs: Array<string> = []
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "switchboard-key-"))
    dirs.push(d)
    return d
  }

  it("is made on first boot in DATA_DIR (mode 0600) and read back the same afterwards", async () => {
    const file = join(dir(), "secrets.key")
    const a = await Effect.runPromise(Secrets.loadKey(undefined, file))
    expect(a).toHaveLength(32)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(await Effect.runPromise(Secrets.loadKey(undefined, file))).toEqual(a)
    expect(readFileSync(file, "utf8").trim()).toBe(Buffer.from(a).toString("hex"))
  })

  it("warns at boot when other users can read the key file, and not when only its owner can", async () => {
    const file = join(dir(), "secrets.key")
    writeFileSync(file, "ef".repeat(32) + "\n")
    chmodSync(file, 0o644) // whatever the umask made it
    const warnings = (run: Effect.Effect<Uint8Array>) => {
      const seen: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => seen.push(`${logLevel.label} ${String(message)}`))
      return Effect.runPromise(run.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))).then((key) => ({ key, seen }))
    }
    const shared = await warnings(Secrets.loadKey(undefined, file))
    expect(Buffer.from(shared.key).toString("hex")).toBe("ef".repeat(32))
    expect(shared.seen).toEqual([`WARN ${file} can be read by other users (mode 0644); it opens every webhook signing secret: chmod 600 it`])
    chmodSync(file, 0o600)
    expect((await warnings(Secrets.loadKey(undefined, file))).seen).toEqual([])
  })

  it("SECRETS_KEY_PREVIOUS is optional and, when set, 64 hex digits too", async () => {
    expect(await Effect.runPromise(Secrets.loadPreviousKey(undefined))).toBeUndefined()
    expect(Buffer.from((await Effect.runPromise(Secrets.loadPreviousKey("cd".repeat(32))))!).toString("hex")).toBe("cd".repeat(32))
    const bad = await Effect.runPromiseExit(Secrets.loadPreviousKey("xyz"))
    expect(Exit.isFailure(bad) ? Cause.pretty(bad.cause) : "loaded").toMatch(/SECRETS_KEY_PREVIOUS: must be 64 hex digits/)
  })

  it("comes from SECRETS_KEY when set, which must be 64 hex digits", async () => {
    const hex = "ab".repeat(32)
    const file = join(dir(), "secrets.key")
    expect(Buffer.from(await Effect.runPromise(Secrets.loadKey(hex, file))).toString("hex")).toBe(hex)
    const bad = await Effect.runPromiseExit(Secrets.loadKey("abc", file))
    expect(Exit.isFailure(bad) ? Cause.pretty(bad.cause) : "loaded").toMatch(/SECRETS_KEY: must be 64 hex digits/)
  })
})
