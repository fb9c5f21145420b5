/**
 * The SQL stores read rows with a mapping derived from each record's schema, without validating every
 * field on the hot path (adapters/sql/rows.ts). This holds that mapping to the schemas: rows written
 * by real use cases on PGlite, read back raw, must pass the record schema's full decode and give the
 * same record as the fast path.
 */
import { SqlClient } from "@effect/sql"
import { Effect, type ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Table } from "../../adapters/sql/rows.ts"
import * as tables from "../../adapters/sql/tables.ts"
import { messagingAddonCharge, numberCharge } from "../../core/billing/pricing.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { makeTestApp } from "../support/app.ts"
import { freshPglite } from "../support/pglite.ts"
import { sqlStores } from "../support/sqlStores.ts"

const sqlTables: ReadonlyArray<readonly [string, Pick<Table<unknown>, "decode" | "decodeChecked">]> = [
  ["workspaces", tables.workspaces],
  ["api_keys", tables.apiKeys],
  ["numbers", tables.numbers],
  ["numbers", tables.numberOwners],
  ["contacts", tables.contacts],
  ["outbox_events", tables.outboxEvents],
  ["threads", tables.threads],
  ["activities", tables.activities],
  ["webhook_endpoints", tables.webhookEndpoints],
  ["webhook_endpoints", tables.endpointSubscriptions],
  ["webhook_deliveries", tables.webhookDeliveries],
  ["ledger_charges", tables.ledgerCharges]
]

describe("SQL rows against their record schemas (PGlite)", () => {
  let app: Awaited<ReturnType<typeof makeTestApp>>
  beforeAll(async () => {
    app = await makeTestApp({ stores: sqlStores(freshPglite("migrated")) })
    const auth = { authorization: `Bearer ${app.testKey}` }
    const call = async (path: string, json: unknown, status = 201) => {
      const res = await app.fetch(`/v1/api${path}`, { method: "POST", headers: auth, json })
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(status)
      return (await res.json()) as any
    }
    const added = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
      method: "POST",
      json: { e164: "+14155550100" }
    })
    expect(added.status).toBe(201)
    await call("/contacts", {
      firstName: "Ada",
      company: null,
      phone: "+14155550123",
      emails: [{ value: "ada@example.com", label: "work" }],
      properties: { plan: "gold" },
      tags: ["vip"]
    })
    const sent = await call("/messages", { to: "+14155550123", body: "Your table is ready" })
    await call("/test-helpers/inbound-messages", { from: "+14155550199", to: "+14155550100", body: "On our way" })
    await call("/test-helpers/delivery-status", { activityId: sent.message.id, status: "delivered" }, 200)
    const hook = await call("/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"], label: "rows" })
    await call(`/webhooks/${hook.webhook.id}/test`, {}, 200)
    // Charges through the ledger port (with a number and without), until a use case writes them.
    const now = new Date()
    await app.runtime.runPromise(
      Effect.flatMap(
        LedgerStore,
        (ledger) =>
          ledger.append(app.workspaceId, [
            numberCharge({ e164: "+18005550100" as E164, type: "toll_free", localNumbers: 1 }, now),
            messagingAddonCharge("+14155550100" as E164, now)
          ], now.toISOString())
      )
    )
  }, 60_000)
  afterAll(() => app?.close())

  it("every table has rows, and each reads the same through both decoders", async () => {
    for (const [name, table] of sqlTables) {
      // The app's runtime holds the SQL stores' client (its type names the memory stores it defaults to).
      const runtime = app.runtime as unknown as ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
      const rows = await runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`SELECT * FROM ${name}`))
      )
      expect(rows.length, name).toBeGreaterThan(0)
      for (const row of rows) expect(table.decodeChecked(row), name).toEqual(table.decode(row))
    }
  })
})
