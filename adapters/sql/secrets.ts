/**
 * Secrets sealed at rest: webhook signing secrets and the server secrets (serverSecrets.ts: cursor
 * signing, media URLs). Signing needs the secret itself, so it cannot be hashed like an API key; it
 * is encrypted (AES-256-GCM) under a key kept outside the database (`SECRETS_KEY`, or
 * `DATA_DIR/secrets.key`), so a database dump or backup alone cannot sign webhooks, cursors or media
 * URLs. Where a secret belongs is bound in as associated data (the endpoint's workspace and id, the
 * setting's name): a sealed secret copied elsewhere does not open.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer } from "effect"
import { Buffer } from "node:buffer"
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs"
import { platform } from "node:os"
import { dirname } from "node:path"
import * as Migrate from "./migrate.ts"
import * as ServerSecretRows from "./serverSecrets.ts"

export interface Sealer {
  /** `v1.<iv>.<ciphertext and tag>` (base64url parts). */
  readonly seal: (plain: string, context: string) => string
  /**
   * Throws on anything not sealed under this key for this context. A plain `whsec_` secret (written
   * by a version without sealing) is returned as it is; the next write of its endpoint seals it.
   */
  readonly open: (sealed: string, context: string) => string
}

export class SecretBox extends Context.Tag("adapters/sql/SecretBox")<SecretBox, Sealer>() {}

export const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

/** A webhook secret as versions before sealing stored it. */
const isPlain = (secret: string) => secret.startsWith("whsec_")

export const makeSealer = (key: Uint8Array): Sealer => {
  if (key.length !== KEY_BYTES) throw new Error(`the secrets key must be ${KEY_BYTES} bytes`)
  return {
    seal: (plain, context) => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(context))
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()])
      return `v1.${iv.toString("base64url")}.${body.toString("base64url")}`
    },
    open: (sealed, context) => {
      if (isPlain(sealed)) return sealed
      const parts = sealed.split(".")
      const iv = Buffer.from(parts[1] ?? "", "base64url")
      const bytes = Buffer.from(parts[2] ?? "", "base64url")
      if (parts.length !== 3 || parts[0] !== "v1" || iv.length !== IV_BYTES || bytes.length < TAG_BYTES) {
        throw new Error("not a sealed secret")
      }
      // authTagLength: Node would otherwise accept a truncated tag.
      const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES }).setAAD(
        Buffer.from(context)
      )
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
        "utf8"
      )
    }
  }
}

/** What a sealed endpoint secret is bound to (ids lowercased: Postgres returns uuids that way). */
export const endpointContext = (workspaceId: string, endpointId: string) =>
  `webhook_endpoints:${workspaceId.toLowerCase()}:${endpointId.toLowerCase()}`

const fingerprint = (key: Uint8Array) => createHmac("sha256", key).update("switchboard secrets key check").digest("hex")

/** Opens with the current key, else with the previous one (while a change of key is under way). */
const withPrevious = (current: Sealer, previous: Sealer | undefined): Sealer =>
  previous === undefined
    ? current
    : {
      seal: current.seal,
      open: (sealed, context) => {
        try {
          return current.open(sealed, context)
        } catch {
          return previous.open(sealed, context)
        }
      }
    }

/**
 * The sealer for this database, and its server secrets opened. The key's fingerprint is kept in
 * `settings`: a process started with another key fails at boot rather than writing secrets the
 * others cannot open. Secrets written before sealing existed (plain `whsec_...`, plain server
 * secrets) are sealed here, once, keeping their values; missing server secrets are made here.
 *
 * To change the key, start with the new key and the old one as `previous`: the boot seals every
 * secret again under the new key and records its fingerprint; the old key is then no longer needed.
 */
export const layer = (key: Uint8Array, previous?: Uint8Array) =>
  Layer.effectContext(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const current = makeSealer(key)
      const sealer = withPrevious(current, previous && makeSealer(previous))
      const accepted = [fingerprint(key), ...(previous ? [fingerprint(previous)] : [])]
      const wrongKey = Effect.dieMessage(
        "SECRETS_KEY (or DATA_DIR/secrets.key) is not the key this database's secrets are sealed with; give every process the same key"
      )
      const check = sql<{ value: string }>`SELECT value FROM settings WHERE name = 'secrets_key_check'`
      if ((yield* check).length === 0) {
        // No fingerprint yet (a new database, or the row was lost): sealed secrets must still open.
        const samples = [...(yield* endpointSample(sql)), ...(yield* ServerSecretRows.sample(sql))]
        if (samples.some((s) => !opensWith(sealer, s.sealed, s.context))) return yield* wrongKey
        yield* sql`INSERT INTO settings (name, value) VALUES ('secrets_key_check', ${accepted[
          0
        ]!}) ON CONFLICT (name) DO NOTHING`
      }
      const [stored] = yield* check
      if (!accepted.includes(stored?.value ?? "")) return yield* wrongKey
      yield* ServerSecretRows.create(sql, current.seal)
      // After a change of key, whatever the new key does not open is sealed again (every endpoint row is read).
      const fresh = freshen(sealer, (sealed, context) => previous !== undefined && !opensWith(current, sealed, context))
      yield* resealEndpoints(sql, fresh, previous !== undefined)
      yield* ServerSecretRows.reseal(sql, fresh)
      if (previous !== undefined) {
        yield* sql`UPDATE settings SET value = ${accepted[0]!} WHERE name = 'secrets_key_check'`
      }
      return Context.make(SecretBox, sealer).pipe(
        Context.add(ServerSecretRows.ServerSecrets, yield* ServerSecretRows.open(sql, sealer))
      )
    }).pipe(Effect.catchTag("SqlError", Effect.die))
  ).pipe(Layer.provide(Migrate.layer))

const opensWith = (sealer: Sealer, secret: string, context: string) =>
  Either.isRight(Either.try(() => sealer.open(secret, context)))

/**
 * A stored secret as it should be stored now, given how a plain one looks where it is kept: a plain
 * one sealed, a `stale` one opened and sealed again. One neither key opens is kept as it is.
 */
export type Fresh = (value: string, context: string, isPlain: (value: string) => boolean) => string

const freshen =
  (sealer: Sealer, stale: (sealed: string, context: string) => boolean): Fresh => (value, context, plain) =>
    plain(value)
      ? sealer.seal(value, context)
      : stale(value, context)
      ? Either.getOrElse(Either.try(() => sealer.seal(sealer.open(value, context), context)), () => value)
      : value

/**
 * The key from `SECRETS_KEY` (64 hex digits), or else from `file`, which the first boot creates
 * (mode 0600). Processes sharing a database need the same key: set SECRETS_KEY on each.
 */
export const loadKey = (given: string | undefined, file: string): Effect.Effect<Uint8Array> =>
  given === undefined
    ? Effect.zipLeft(parseKey(file, () => readOrCreate(file)), warnIfShared(file))
    : parseKey("SECRETS_KEY", () => given)

/**
 * The key file opens every sealed secret. A copy or restored backup can leave it readable
 * by other users (`cp` under the usual umask gives 0644): say so at boot rather than refuse to start.
 */
const warnIfShared = (file: string) =>
  Effect.suspend(() => {
    if (platform() === "win32") return Effect.void
    const mode = statSync(file).mode & 0o777
    return (mode & 0o077) === 0
      ? Effect.void
      : Effect.logWarning(
        `${file} can be read by other users (mode ${
          mode.toString(8).padStart(4, "0")
        }); it opens every secret sealed in the database: chmod 600 it`
      )
  })

/** `SECRETS_KEY_PREVIOUS`, while the key is being changed. */
export const loadPreviousKey = (given: string | undefined): Effect.Effect<Uint8Array | undefined> =>
  given === undefined ? Effect.succeed(undefined) : parseKey("SECRETS_KEY_PREVIOUS", () => given)

/** What is wrong with a key's text (SECRETS_KEY, the key file), or undefined; read by ServerConfig before anything is written. */
export const keyProblem = (text: string): string | undefined =>
  /^[0-9a-f]{64}$/i.test(text.trim()) ? undefined : `must be ${KEY_BYTES * 2} hex digits`

const parseKey = (source: string, read: () => string) =>
  Effect.try({
    try: () => {
      const hex = read().trim()
      const problem = keyProblem(hex)
      if (problem !== undefined) throw new Error(problem)
      return Uint8Array.from(Buffer.from(hex, "hex"))
    },
    catch: (e) => new Error(`${source}: ${e instanceof Error ? e.message : String(e)}`)
  }).pipe(Effect.orDie)

/**
 * The key file appears whole or not at all: written and synced under a temporary name, then linked
 * into place. Of two processes starting at once on one DATA_DIR, the first link wins and the other
 * reads it; a crash mid-write leaves no empty key file behind.
 */
const readOrCreate = (file: string) => {
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`
  const fd = openSync(tmp, "wx", 0o600)
  try {
    writeSync(fd, randomBytes(KEY_BYTES).toString("hex") + "\n")
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(tmp, file)
    syncDirectory(dirname(file))
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw e
  } finally {
    unlinkSync(tmp)
  }
  return readFileSync(file, "utf8")
}

/** Makes the new directory entry durable; best effort where directories cannot be opened. */
const syncDirectory = (dir: string) => {
  try {
    const fd = openSync(dir, "r")
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // not supported here (some platforms): the file itself is synced
  }
}

type Previous = { readonly secret: string; readonly expiresAt: string }

/** One sealed endpoint secret, for a boot to check its key against. */
const endpointSample = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<
      { workspace_id: string; id: string; secret: string }
    >`SELECT workspace_id, id, secret FROM webhook_endpoints WHERE secret LIKE 'v1.%' LIMIT 1`,
    (rows) => rows.map((r) => ({ sealed: r.secret, context: endpointContext(String(r.workspace_id), String(r.id)) }))
  )

/**
 * Writes every endpoint secret back as `fresh` gives it: rows holding plain ones, or after a change
 * of key (`everyRow`) all of them. A secret neither key opens is left as it is: its endpoint's
 * deliveries wait, logged by the worker.
 */
const resealEndpoints = (sql: SqlClient.SqlClient, fresh: Fresh, everyRow: boolean) =>
  Effect.gen(function*() {
    const rows = yield* sql<{ workspace_id: string; id: string; secret: string; previous_secrets: unknown }>`
      SELECT workspace_id, id, secret, previous_secrets FROM webhook_endpoints
      WHERE ${everyRow ? sql`TRUE` : sql`secret LIKE 'whsec\\_%' OR previous_secrets::text LIKE '%"whsec\\_%'`}`
    for (const r of rows) {
      const context = endpointContext(String(r.workspace_id), String(r.id))
      const previous =
        (typeof r.previous_secrets === "string" ? JSON.parse(r.previous_secrets) : r.previous_secrets) as Array<
          Previous
        >
      const sealed = (s: string) => fresh(s, context, isPlain)
      const secret = sealed(r.secret)
      const sealedPrevious = previous.map((p) => ({ ...p, secret: sealed(p.secret) }))
      if (secret === r.secret && sealedPrevious.every((p, i) => p.secret === previous[i]!.secret)) continue
      // Only if unchanged since read: another process sealing or rotating at once keeps its write.
      yield* sql`UPDATE webhook_endpoints SET secret = ${secret}, previous_secrets = ${
        JSON.stringify(sealedPrevious)
      }::jsonb
        WHERE workspace_id = ${r.workspace_id} AND id = ${r.id} AND secret = ${r.secret}`
    }
  })
