/**
 * The MailOutbox contract, run unchanged against memory, PGlite and a real Postgres: rows stamped
 * with id and now, read back exactly (`to` is an SQL keyword; newlines and non-ASCII survive),
 * newest first, tenant isolation, and a row written in a rolled-back transaction is gone. The
 * outbox-only Mailer (no SMTP_URL) keeps what it is given.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { layerOutbox, sendMail } from "../../core/mail/mailer.ts"
import type { Mail } from "../../core/mail/message.ts"
import { MailOutbox } from "../../core/mail/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = MailOutbox | WorkspaceStore | Transactor

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({ id, name: "W", billing: defaultBilling, ...defaultTexting, createdAt: ts(0) })
  return id
})

const mail = (subject: string): Mail => ({
  to: "Owner <owner@acme.example>",
  subject,
  text: `${subject}\nEIN ••••6789 — ✓ ünïcode`
})

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("append stamps the mail with an id and now, and list reads it back exactly", () =>
      Effect.gen(function*() {
        const outbox = yield* MailOutbox
        const ws = yield* newWorkspace
        const before = new Date().toISOString()
        const row = yield* outbox.append(ws, mail("Receipt"))
        const after = new Date().toISOString()
        assert.match(row.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        assert.isTrue(row.createdAt >= before && row.createdAt <= after, row.createdAt)
        assert.deepStrictEqual(row, { ...mail("Receipt"), id: row.id, workspaceId: ws, createdAt: row.createdAt })
        assert.deepStrictEqual(yield* outbox.list(ws), [row])
      }))

    it.effect("list is newest first and holds only the workspace's own mail", () =>
      Effect.gen(function*() {
        const outbox = yield* MailOutbox
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const a = yield* outbox.append(ws, mail("a"))
        const x = yield* outbox.append(other, mail("x"))
        const b = yield* outbox.append(ws, mail("b")) // same millisecond possibly: the id orders it
        yield* Effect.sleep("3 millis")
        const c = yield* outbox.append(ws, mail("c"))
        assert.deepStrictEqual(yield* outbox.list(ws), [c, b, a])
        assert.deepStrictEqual(yield* outbox.list(other), [x])
        assert.deepStrictEqual(yield* outbox.list(uuid()), [])
      }))

    it.effect("mail kept inside a transaction that rolls back is gone", () =>
      Effect.gen(function*() {
        const outbox = yield* MailOutbox
        const ws = yield* newWorkspace
        const kept = yield* outbox.append(ws, mail("kept"))
        const result = yield* Effect.either(
          (yield* Transactor).withTransaction(
            Effect.zipRight(outbox.append(ws, mail("lost")), Effect.fail("declined" as const))
          )
        )
        assert.deepStrictEqual(result._tag === "Left" ? result.left : null, "declined")
        assert.deepStrictEqual(yield* outbox.list(ws), [kept])
      }))

    it.effect("the outbox-only Mailer keeps the mail and returns its row", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const row = yield* sendMail(ws, mail("Sent")).pipe(Effect.provide(layerOutbox))
        assert.deepStrictEqual(yield* (yield* MailOutbox).list(ws), [row])
        assert.strictEqual(row.subject, "Sent")
      }))
  })

contract("MailOutbox: memory", MemoryStores.layer)

sqlContract({ name: (db) => `MailOutbox: ${db}`, adapter: sqlStores, suite: contract, database: "mail" })
