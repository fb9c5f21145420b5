/**
 * One SqlClient implementation of every store port (Postgres dialect; runs on Postgres and PGlite).
 * Infrastructure failures are defects (answered 500 with the request id logged); domain outcomes
 * such as "number taken" are typed.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { Contact } from "../../core/contacts/model.ts"
import { searchDigits, searchText } from "../../core/contacts/rules.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import * as Signal from "../../core/events/signal.ts"
import { Ids } from "../../core/ids.ts"
import { NumberStore, type WorkspaceNumber } from "../../core/numbers.ts"
import type { E164 } from "../../core/phone.ts"
import { nowIso } from "../../core/time.ts"
import { Transactor } from "../../core/transactor.ts"
import type { Workspace } from "../../core/workspaces/model.ts"
import { type ApiKeyRecord, ApiKeyStore, WorkspaceStore } from "../../core/workspaces/store.ts"
import * as Conversations from "./conversations.ts"
import * as Idempotency from "./idempotency.ts"
import * as Webhooks from "./webhooks.ts"
import { iso, isoOrNull, isUniqueViolation, json, likeContains } from "./rows.ts"

type Row = Record<string, unknown>

const toWorkspace = (r: Row): Workspace => ({
  id: String(r.id),
  name: String(r.name),
  billing: json(r.billing),
  createdAt: iso(r.created_at)
})

const toKey = (r: Row): ApiKeyRecord => ({
  id: String(r.id),
  workspaceId: String(r.workspace_id),
  kind: r.kind as ApiKeyRecord["kind"],
  scopes: json(r.scopes),
  name: (r.name as string | null) ?? null,
  hash: String(r.hash),
  createdAt: iso(r.created_at),
  revokedAt: isoOrNull(r.revoked_at)
})

const toNumber = (r: Row): WorkspaceNumber => ({
  e164: String(r.e164) as E164,
  type: r.type as WorkspaceNumber["type"],
  voiceMode: r.voice_mode as WorkspaceNumber["voiceMode"],
  agentId: (r.agent_id as string | null) ?? null,
  forwardTo: (r.forward_to as string | null) ?? null,
  assignedUserId: (r.assigned_user_id as string | null) ?? null,
  status: String(r.status)
})

const toContact = (r: Row): Contact => ({
  id: String(r.id),
  workspaceId: String(r.workspace_id),
  firstName: (r.first_name as string | null) ?? null,
  lastName: (r.last_name as string | null) ?? null,
  company: (r.company as string | null) ?? null,
  phones: json(r.phones),
  emails: json(r.emails),
  notes: json(r.notes),
  properties: json(r.properties),
  tags: json(r.tags),
  source: (r.source as string | null) ?? null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at)
})

const CONTACT_COLUMNS = "workspace_id, id, first_name, last_name, company, phones, emails, notes, properties, tags, source, created_at, updated_at"

const baseLayer = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* Signal.OutboxSignal
    const die = Effect.orDie

    const workspaces = WorkspaceStore.of({
      insert: (w) =>
        die(sql`INSERT INTO workspaces (id, name, billing, created_at)
                VALUES (${w.id}, ${w.name}, ${JSON.stringify(w.billing)}::jsonb, ${w.createdAt})`),
      get: (id) => die(sql<Row>`SELECT * FROM workspaces WHERE id = ${id}`).pipe(Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toWorkspace)))),
      update: (w) =>
        die(sql`UPDATE workspaces SET name = ${w.name}, billing = ${JSON.stringify(w.billing)}::jsonb WHERE id = ${w.id}`),
      count: die(sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`).pipe(Effect.map((rs) => Number(rs[0]?.n ?? 0)))
    })

    const keys = ApiKeyStore.of({
      insert: (k) =>
        die(sql`INSERT INTO api_keys (id, workspace_id, kind, scopes, name, hash, created_at)
                VALUES (${k.id}, ${k.workspaceId}, ${k.kind}, ${JSON.stringify(k.scopes)}::jsonb, ${k.name}, ${k.hash}, ${k.createdAt})`),
      findByHash: (hash) =>
        die(sql<Row>`SELECT * FROM api_keys WHERE hash = ${hash}`).pipe(Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toKey)))),
      revoke: (id, at) =>
        die(sql<Row>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${at}::timestamptz) WHERE id = ${id} RETURNING *`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toKey)))
        )
    })

    const numbers = NumberStore.of({
      insert: (workspaceId, n, inboxId) =>
        sql`INSERT INTO numbers (e164, workspace_id, inbox_id, type, voice_mode, agent_id, forward_to, assigned_user_id, status)
            VALUES (${n.e164}, ${workspaceId}, ${inboxId}, ${n.type}, ${n.voiceMode}, ${n.agentId}, ${n.forwardTo}, ${n.assignedUserId}, ${n.status})`.pipe(
          Effect.asVoid,
          Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.fail("taken" as const) : Effect.die(e)))
        ),
      findByE164: (e164) =>
        die(sql<Row>`SELECT * FROM numbers WHERE e164 = ${e164}`).pipe(
          Effect.map((rs) =>
            Option.fromNullable(rs[0]).pipe(
              Option.map((r) => ({ workspaceId: String(r.workspace_id), inboxId: String(r.inbox_id), number: toNumber(r) }))
            )
          )
        ),
      list: (workspaceId) =>
        die(sql<Row>`SELECT * FROM numbers WHERE workspace_id = ${workspaceId} ORDER BY created_at, e164`).pipe(Effect.map((rs) => rs.map(toNumber)))
    })

    const contactValues = (c: Contact) => sql`
      ${c.workspaceId}, ${c.id}, ${c.firstName}, ${c.lastName}, ${c.company},
      ${JSON.stringify(c.phones)}::jsonb, ${JSON.stringify(c.emails)}::jsonb, ${JSON.stringify(c.notes)}::jsonb,
      ${JSON.stringify(c.properties)}::jsonb, ${JSON.stringify(c.tags)}::jsonb, ${c.source},
      ${c.createdAt}::timestamptz, ${c.updatedAt}::timestamptz, ${searchText(c)}, ${searchDigits(c)}`

    const contacts = ContactStore.of({
      insert: (c) =>
        die(sql`INSERT INTO contacts (${sql.unsafe(CONTACT_COLUMNS)}, search_text, search_digits) VALUES (${contactValues(c)})`),
      get: (workspaceId, id) =>
        die(sql<Row>`SELECT * FROM contacts WHERE workspace_id = ${workspaceId} AND id = ${id}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toContact)))
        ),
      update: (c) =>
        die(sql`
          UPDATE contacts SET first_name = ${c.firstName}, last_name = ${c.lastName}, company = ${c.company},
            phones = ${JSON.stringify(c.phones)}::jsonb, emails = ${JSON.stringify(c.emails)}::jsonb,
            notes = ${JSON.stringify(c.notes)}::jsonb, properties = ${JSON.stringify(c.properties)}::jsonb,
            tags = ${JSON.stringify(c.tags)}::jsonb, source = ${c.source}, updated_at = ${c.updatedAt}::timestamptz,
            search_text = ${searchText(c)}, search_digits = ${searchDigits(c)}
          WHERE workspace_id = ${c.workspaceId} AND id = ${c.id}`),
      remove: (workspaceId, id) =>
        die(sql<Row>`DELETE FROM contacts WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`).pipe(Effect.map((rs) => rs.length > 0)),
      findByPhones: (workspaceId, phones) =>
        phones.length === 0
          ? Effect.succeed([])
          : die(sql<Row>`
              SELECT * FROM contacts WHERE workspace_id = ${workspaceId}
              AND ${sql.or(phones.map((p) => sql`phones @> ${JSON.stringify([{ value: p }])}::jsonb`))}
              ORDER BY created_at, id`).pipe(Effect.map((rs) => rs.map(toContact))),
      list: ({ workspaceId, terms, limit, after }) => {
        const conditions = [sql`workspace_id = ${workspaceId}`]
        if (after !== null) conditions.push(sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`)
        if (terms !== null) {
          conditions.push(
            terms.digits === null
              ? sql`search_text LIKE ${likeContains(terms.text)}`
              : sql`(search_text LIKE ${likeContains(terms.text)} OR search_digits LIKE ${likeContains(terms.digits)})`
          )
        }
        // One statement; Postgres picks the plan from the term's estimated frequency (statistics
        // 1000, migration 0003): a common term walks contacts_recent newest first and stops at
        // `limit`, a rare one takes the trigram index and sorts its few matches.
        return die(sql<Row>`
          SELECT * FROM contacts WHERE ${sql.and(conditions)}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(Effect.map((rs) => rs.map(toContact)))
      }
    })

    const outbox = EventOutbox.of({
      append: (workspaceId, events) =>
        Effect.gen(function* () {
          if (events.length === 0) return
          const { uuid } = yield* Ids
          const createdAt = yield* nowIso
          yield* die(sql`INSERT INTO outbox_events ${sql.insert(
            events.map((e) => ({ id: uuid(), workspace_id: workspaceId, type: e.type, data: JSON.stringify(e.data), created_at: createdAt }))
          )}`)
          yield* Signal.announceAppend(signal)
        }),
      list: (workspaceId) =>
        die(sql<Row>`SELECT * FROM outbox_events WHERE workspace_id = ${workspaceId} ORDER BY seq`).pipe(
          Effect.map((rs) =>
            rs.map((r) => ({ id: String(r.id), workspaceId: String(r.workspace_id), type: String(r.type), data: json(r.data), createdAt: iso(r.created_at) }))
          )
        )
    })

    const transactor = Signal.announcingCommits(signal, {
      withTransaction: (self) =>
        sql.withTransaction(self).pipe(
          Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)
        ) as typeof self,
      // A transaction-scoped advisory lock: released by COMMIT or ROLLBACK, never leaked.
      lock: (key) => die(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`).pipe(Effect.asVoid)
    })

    return Context.make(WorkspaceStore, workspaces).pipe(
      Context.add(ApiKeyStore, keys),
      Context.add(NumberStore, numbers),
      Context.add(ContactStore, contacts),
      Context.add(EventOutbox, outbox),
      Context.add(Transactor, transactor)
    )
  })
)

/** What the stores need besides a SqlClient, re-exported for embedders: migrations and the webhook-secret sealer. */
export * as Migrate from "./migrate.ts"
export * as Secrets from "./secrets.ts"

/**
 * Every store port and the transactor over one SqlClient, and the signal their commits give the
 * outbox worker. Needs `Secrets.layer(key)`, after `Migrate.layer` has run.
 */
export const layer = Layer.mergeAll(baseLayer, Webhooks.layer, Conversations.layer, Idempotency.layer).pipe(Layer.provideMerge(Signal.layer))

/** A server secret (cursor signing, media URLs), made once per database so every process agrees. */
export const serverSecret = (name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fresh = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")
    yield* sql`INSERT INTO settings (name, value) VALUES (${name}, ${fresh}) ON CONFLICT (name) DO NOTHING`
    const rows = yield* sql<{ value: string }>`SELECT value FROM settings WHERE name = ${name}`
    return Uint8Array.from(rows[0]!.value.match(/../g)!, (h) => parseInt(h, 16))
  }).pipe(Effect.orDie)

export const cursorSecret = serverSecret("cursor_secret")
