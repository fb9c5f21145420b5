/**
 * Secrets sealed at rest (adapters/sql/secrets.ts): the sealer itself, what the SQL store writes
 * for webhooks, the boot check that every process uses one key, sealing of secrets stored before
 * sealing existed, the server secrets in `settings` through the server's wiring, and where the key
 * comes from.
 */
import { SqlClient } from "@effect/sql"
import { Cause, ConfigProvider, Context, Effect, Exit, Layer, Logger, Option, type Scope } from "effect"
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as Secrets from "../../adapters/sql/secrets.ts"
import { ServerConfig } from "../../apps/server/config.ts"
import { SqlLive, StoresOn } from "../../apps/server/main.ts"
import { CursorCodec, makeCursorCodec } from "../../core/kernel/pagination.ts"
import { MediaUrls } from "../../core/media/model.ts"
import type { EndpointRecord } from "../../core/webhooks/model.ts"
import { generateSecret } from "../../core/webhooks/signing.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { freshPglite } from "../support/pglite.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStoresWithKey } from "../support/sqlStores.ts"
import { endpointRecord } from "../support/webhooks.ts"

const key = () => crypto.getRandomValues(new Uint8Array(Secrets.KEY_BYTES))

const endpoint = (): EndpointRecord =>
  endpointRecord(crypto.randomUUID(), {
    previousSecrets: [{ secret: generateSecret(), expiresAt: new Date(Date.now() + 60_000).toISOString() }]
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
    expect(() => sealer.open(`${v}.${iv}.${whole.subarray(0, whole.length - 12).toString("base64url")}`, "ctx"))
      .toThrow()
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
    Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(freshPglite("migrated"))))

  it("stores no secret in the clear and reads back the record it was given", () =>
    onOneDatabase(
      Effect.gen(function*() {
        const store = Context.get(yield* Layer.build(stores(key())), WebhookStore)
        const sql = yield* SqlClient.SqlClient
        const e = endpoint()
        yield* store.insertEndpoint(e)
        const [raw] = yield* sql<
          { secret: string; all: string }
        >`SELECT secret, secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(raw!.secret).toMatch(/^v1\./)
        expect(raw!.all).not.toContain("whsec_")
        expect(Option.getOrThrow(yield* store.getEndpoint(e.workspaceId, e.id))).toEqual(e)
        const rotated = {
          ...e,
          secret: generateSecret(),
          previousSecrets: [{ secret: e.secret, expiresAt: e.createdAt }]
        }
        yield* store.updateEndpoint(rotated)
        expect(yield* store.listEndpoints(e.workspaceId)).toEqual([rotated])
        const [after] = yield* sql<
          { all: string }
        >`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(after!.all).not.toContain("whsec_")
      })
    ))

  it("a process with another key fails at boot; secrets stored in the clear are sealed once, at boot", () =>
    onOneDatabase(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = key()
        yield* Layer.build(stores(first))
        // A row as a version without sealing wrote it.
        const legacy = endpoint()
        yield* sql`INSERT INTO webhook_endpoints (workspace_id, id, url, events, label, status, api_version, secret, previous_secrets, failing_since, created_at)
          VALUES (${legacy.workspaceId}, ${legacy.id}, ${legacy.url}, '["*"]'::jsonb, NULL, 'enabled', NULL, ${legacy.secret},
                  ${JSON.stringify(legacy.previousSecrets)}::jsonb, NULL, ${legacy.createdAt}::timestamptz)`

        const other = yield* Effect.exit(Layer.build(stores(key())))
        expect(Exit.isFailure(other) ? Cause.pretty(other.cause) : "booted").toMatch(
          /not the key this database's secrets are sealed with/
        )

        const store = Context.get(yield* Layer.build(stores(first)), WebhookStore)
        const [raw] = yield* sql<{ all: string }>`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`
        expect(raw!.all).not.toContain("whsec_")
        expect(Option.getOrThrow(yield* store.getEndpoint(legacy.workspaceId, legacy.id))).toEqual(legacy)

        // Without the fingerprint row, a sealed secret that does not open still stops another key.
        yield* sql`DELETE FROM settings WHERE name = 'secrets_key_check'`
        const unchecked = yield* Effect.exit(Layer.build(stores(key())))
        expect(Exit.isFailure(unchecked) ? Cause.pretty(unchecked.cause) : "booted").toMatch(
          /not the key this database's secrets are sealed with/
        )
      })
    ))

  it("a new key with the old one as previous seals every secret again at boot; then the old key is refused", () =>
    onOneDatabase(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [oldKey, newKey] = [key(), key()]
        const e = endpoint()
        yield* Context.get(yield* Layer.build(stores(oldKey)), WebhookStore).insertEndpoint(e)
        const stored = () =>
          sql<{ all: string }>`SELECT secret || previous_secrets::text AS all FROM webhook_endpoints`.pipe(
            Effect.map((rs) => rs[0]!.all)
          )
        const before = yield* stored()

        const changing = Context.get(yield* Layer.build(stores(newKey, oldKey)), WebhookStore)
        expect(yield* stored()).not.toBe(before)
        expect(Option.getOrThrow(yield* changing.getEndpoint(e.workspaceId, e.id))).toEqual(e)

        // Every secret now opens under the new key alone, and the old key no longer boots.
        const after = Context.get(yield* Layer.build(stores(newKey)), WebhookStore)
        expect(Option.getOrThrow(yield* after.getEndpoint(e.workspaceId, e.id))).toEqual(e)
        const old = yield* Effect.exit(Layer.build(stores(oldKey)))
        expect(Exit.isFailure(old) ? Cause.pretty(old.cause) : "booted").toMatch(
          /not the key this database's secrets are sealed with/
        )
      })
    ))

  it("an endpoint whose secret does not open holds back only its own deliveries", () =>
    onOneDatabase(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = Context.get(yield* Layer.build(stores(key())), WebhookStore)
        const [good, bad] = [endpoint(), endpoint()]
        yield* store.insertEndpoint(good)
        yield* store.insertEndpoint(bad)
        // `bad` gets a secret sealed for another endpoint: it cannot be opened as its own.
        yield* sql`UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = ${good.id}) WHERE id = ${bad.id}`
        const delivery = (e: EndpointRecord) => ({
          id: crypto.randomUUID(),
          workspaceId: e.workspaceId,
          endpointId: e.id,
          eventId: `evt_${crypto.randomUUID()}`,
          eventType: "contact.updated",
          payload: "{}",
          status: "pending" as const,
          attempts: 0,
          responseStatus: null,
          error: null,
          createdAt: e.createdAt,
          lastAttemptAt: null,
          nextAttemptAt: e.createdAt
        })
        yield* store.insertDeliveries([delivery(good), delivery(bad)])
        const now = new Date().toISOString()
        const claimed = yield* store.claimDue(now, new Date(Date.now() + 60_000).toISOString(), 10)
        expect(claimed.map((c) => c.endpoint.id)).toEqual([good.id])
        expect(claimed[0]!.endpoint.secret).toBe(good.secret)
        // fan-out reads no secrets, so both still subscribe
        expect((yield* store.enabledEndpoints([good.workspaceId, bad.workspaceId])).map((e) => e.id).sort()).toEqual(
          [good.id, bad.id].sort()
        )
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
      return Effect.runPromise(run.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))).then((key) => ({
        key,
        seen
      }))
    }
    const shared = await warnings(Secrets.loadKey(undefined, file))
    expect(Buffer.from(shared.key).toString("hex")).toBe("ef".repeat(32))
    expect(shared.seen).toEqual([
      `WARN ${file} can be read by other users (mode 0644); it opens every secret sealed in the database: chmod 600 it`
    ])
    chmodSync(file, 0o600)
    expect((await warnings(Secrets.loadKey(undefined, file))).seen).toEqual([])
  })

  it("SECRETS_KEY_PREVIOUS is optional and, when set, 64 hex digits too", async () => {
    expect(await Effect.runPromise(Secrets.loadPreviousKey(undefined))).toBeUndefined()
    expect(Buffer.from((await Effect.runPromise(Secrets.loadPreviousKey("cd".repeat(32))))!).toString("hex")).toBe(
      "cd".repeat(32)
    )
    const bad = await Effect.runPromiseExit(Secrets.loadPreviousKey("xyz"))
    expect(Exit.isFailure(bad) ? Cause.pretty(bad.cause) : "loaded").toMatch(
      /SECRETS_KEY_PREVIOUS: must be 64 hex digits/
    )
  })

  it("comes from SECRETS_KEY when set, which must be 64 hex digits", async () => {
    const hex = "ab".repeat(32)
    const file = join(dir(), "secrets.key")
    expect(Buffer.from(await Effect.runPromise(Secrets.loadKey(hex, file))).toString("hex")).toBe(hex)
    const bad = await Effect.runPromiseExit(Secrets.loadKey("abc", file))
    expect(Exit.isFailure(bad) ? Cause.pretty(bad.cause) : "loaded").toMatch(/SECRETS_KEY: must be 64 hex digits/)
  })
})

/**
 * Server secrets (cursor signing, media URLs) kept in `settings`, through the server's own wiring
 * (apps/server/main.ts) over each database: what a dump of `settings` gives its reader, the change
 * of key, a database from before server secrets were sealed, and a boot with another key.
 */
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const WORKSPACE = "0c6a2f4e-8a4b-4f43-9d53-2d7f3b6c1a10"

/** The server's configuration with `env` as its environment. */
const configOf = (env: Record<string, string>) =>
  Effect.withConfigProvider(ServerConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

/** The stores as the server boots them over the database at hand, with `env` as its environment. */
const bootWith = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const booted = yield* Layer.build(StoresOn(yield* configOf(env)))
    return { urls: Context.get(booted, MediaUrls), cursors: Context.get(booted, CursorCodec) }
  }).pipe(Effect.orDie)
const boot = (k: Uint8Array, previous?: Uint8Array) =>
  bootWith({ SECRETS_KEY: hex(k), ...(previous ? { SECRETS_KEY_PREVIOUS: hex(previous) } : {}) })
type Booted = Effect.Effect.Success<ReturnType<typeof boot>>

const refused = (exit: Exit.Exit<unknown, unknown>) =>
  expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "booted").toMatch(
    /is not the key this database's .*sealed with/
  )

/** A media URL's parts, checked by the server. */
const accepts = (urls: MediaUrls, url: string) => {
  const u = new URL(url)
  const [workspaceId, key] = u.pathname.split("/").slice(3).map(decodeURIComponent)
  return urls.verify(workspaceId!, key!, u.searchParams.get("expires") ?? "", u.searchParams.get("signature") ?? "")
}
const decodes = (cursors: CursorCodec, cursor: string) => Effect.isSuccess(cursors.decode("contacts", cursor))

/** Something signed with these secret bytes, as the server signs it: a media URL and a cursor. */
const signedWith = (secret: Uint8Array) =>
  Effect.gen(function*() {
    const url = yield* Effect.flatMap(SignedUrls.make({ baseUrl: "https://api.example.com", secret }), (u) =>
      u.sign(WORKSPACE, "photo.jpg"))
    const cursor = yield* Effect.flatMap(makeCursorCodec(secret), (c) =>
      c.encode("contacts", ["2024-01-01T00:00:00.000Z", WORKSPACE]))
    return { url, cursor }
  })

/** What the server itself signed, so a check that accepts nothing cannot pass. */
const signedBy = ({ cursors, urls }: Booted) =>
  Effect.all({
    url: urls.sign(WORKSPACE, "photo.jpg"),
    cursor: cursors.encode("contacts", ["2024-01-01T00:00:00.000Z", WORKSPACE])
  })

const stillAccepted = (server: Booted, signed: { url: string; cursor: string }) =>
  Effect.all([accepts(server.urls, signed.url), decodes(server.cursors, signed.cursor)])

/**
 * What a dump of `settings` lets its reader forge: every value, as text and as the hex it may
 * spell, tried as the secret of a media URL and of a cursor the server then accepts.
 */
const forgeries = (server: Booted) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const forged: Array<string> = []
    for (const { name, value } of yield* sql<{ name: string; value: string }>`SELECT name, value FROM settings`) {
      const candidates = [
        new TextEncoder().encode(value),
        ...(/^([0-9a-f]{2})+$/i.test(value) ? [Uint8Array.from(Buffer.from(value, "hex"))] : [])
      ]
      for (const secret of candidates.filter((c) => c.length >= 16)) {
        const [url, cursor] = yield* Effect.flatMap(signedWith(secret), (s) => stillAccepted(server, s))
        if (url) forged.push(`a media URL from ${name}`)
        if (cursor) forged.push(`a cursor from ${name}`)
      }
    }
    return forged
  })

const settingsValues = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<
      { name: string; value: string }
    >`SELECT name, value FROM settings WHERE name <> 'secrets_key_check' ORDER BY name`
)

const serverSecretsSuite = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  describe(name, () => {
    const onIt = <A, E>(program: Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>) =>
      Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(database)))

    it("a dump of settings after boot holds no server secret: no value signs a media URL or a cursor the server accepts", () =>
      onIt(
        Effect.gen(function*() {
          const server = yield* boot(key())
          expect(yield* stillAccepted(server, yield* signedBy(server))).toEqual([true, true])
          expect(yield* forgeries(server)).toEqual([])
          for (const row of yield* settingsValues) expect(row.value, row.name).toMatch(/^v1\./)
        })
      ))

    it("server secrets stored in the clear by an earlier version are sealed at the next boot, keeping their values", () =>
      onIt(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* Layer.build(Migrate.layer)
          // As versions before sealed server secrets made them: 32 random bytes, in hex, in the clear.
          const [cursorSecret, mediaSecret] = [key(), key()]
          yield* sql`INSERT INTO settings (name, value) VALUES ('cursor_secret', ${
            hex(cursorSecret)
          }), ('media_secret', ${hex(mediaSecret)})`
          const before = { url: (yield* signedWith(mediaSecret)).url, cursor: (yield* signedWith(cursorSecret)).cursor }

          const server = yield* boot(key())
          expect(yield* stillAccepted(server, before)).toEqual([true, true])
          expect(yield* forgeries(server)).toEqual([])
          const dump = JSON.stringify(yield* sql`SELECT * FROM settings`)
          expect(dump).not.toContain(hex(cursorSecret))
          expect(dump).not.toContain(hex(mediaSecret))
        })
      ))

    it("a media URL and a cursor made before a change of key still verify after it; the boot with the old key as previous seals them again", () =>
      onIt(
        Effect.gen(function*() {
          const [oldKey, newKey] = [key(), key()]
          const signed = yield* signedBy(yield* boot(oldKey))
          const before = yield* settingsValues

          const changing = yield* boot(newKey, oldKey)
          expect(yield* stillAccepted(changing, signed)).toEqual([true, true])
          const after = yield* settingsValues
          expect(after.map((r) => r.name)).toEqual(before.map((r) => r.name))
          after.forEach((r, i) => expect(r.value, `${r.name} sealed again`).not.toBe(before[i]!.value))

          const changed = yield* boot(newKey)
          expect(yield* stillAccepted(changed, signed)).toEqual([true, true])
          expect(yield* forgeries(changed)).toEqual([])
          refused(yield* Effect.exit(boot(oldKey)))
        })
      ))

    it("a boot with another key refuses to start, also when the key's fingerprint is lost and no webhook exists", () =>
      onIt(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* boot(key())
          refused(yield* Effect.exit(boot(key())))
          yield* sql`DELETE FROM settings WHERE name = 'secrets_key_check'`
          refused(yield* Effect.exit(boot(key())))
        })
      ))
  })

sqlContract({
  name: (db) => `server secrets sealed at rest: ${db}`,
  adapter: (client) => client,
  suite: serverSecretsSuite,
  database: "secrets"
})

describe("server secrets with the embedded default (PGlite in DATA_DIR, the key file beside it)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-secrets-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it("seals them in the database, and the next boot opens the same ones", async () => {
    const env = { DATA_DIR: dataDir }
    /** One boot, as StoresLive makes it: the database and the key from DATA_DIR. */
    const run = <A>(use: (server: Booted) => Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
      Effect.runPromise(
        Effect.flatMap(bootWith(env), use).pipe(
          Effect.scoped,
          Effect.provide(Layer.unwrapEffect(Effect.map(configOf(env), SqlLive))),
          Effect.orDie
        )
      )
    const signed = await run((server) =>
      Effect.gen(function*() {
        expect(yield* forgeries(server)).toEqual([])
        return yield* signedBy(server)
      })
    )
    expect(statSync(join(dataDir, "secrets.key")).mode & 0o777).toBe(0o600)
    expect(await run((server) => stillAccepted(server, signed))).toEqual([true, true])
  })
})
