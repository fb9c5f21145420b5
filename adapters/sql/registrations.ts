/**
 * RegistrationStore on SQL: one row of `texting_registrations` per workspace. The registry's brand
 * and campaign ids are generated columns of the jsonb (migration 0012), which `byRegistryId` finds
 * through their indexes.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { awaitingSteps, RegistrationStore } from "../../core/registration/store.ts"
import { textingRegistrations } from "./tables.ts"

const columns = textingRegistrations.columns()

export const layer = Layer.effect(
  RegistrationStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    RegistrationStore.of({
      get: (workspaceId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM texting_registrations WHERE workspace_id = ${workspaceId}`)
          .pipe(
            Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), textingRegistrations.decode))
          ),
      put: (registration) => {
        const row = textingRegistrations.row(registration)
        return Effect.orDie(
          sql`INSERT INTO texting_registrations ${sql.insert(row)}
            ON CONFLICT (workspace_id) DO UPDATE SET ${sql.update(row, ["workspace_id"])}`
        )
      },
      lease: (workspaceId, now, until) =>
        Effect.orDie(
          sql`UPDATE texting_registrations SET registry_lease_until = ${until}::timestamptz
            WHERE workspace_id = ${workspaceId}
              AND (registry_lease_until IS NULL OR registry_lease_until < ${now}::timestamptz)
            RETURNING workspace_id`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      release: (workspaceId) =>
        Effect.orDie(
          sql`UPDATE texting_registrations SET registry_lease_until = NULL WHERE workspace_id = ${workspaceId}`
        ).pipe(Effect.asVoid),
      awaitingRegistry: (limit) =>
        Effect.orDie(
          sql<{ workspace_id: string }>`SELECT workspace_id FROM texting_registrations WHERE ${
            sql.in("step", awaitingSteps)
          }
            ORDER BY updated_at, workspace_id LIMIT ${limit}`
        ).pipe(Effect.map((rs) => rs.map((r) => r.workspace_id))),
      // The join repeats core/registration/assignment.ts's `assignable`: active, ordered, local.
      awaitingAssignment: (limit) =>
        Effect.orDie(
          sql<{ workspace_id: string }>`SELECT r.workspace_id FROM texting_registrations r
            WHERE r.step = 'campaign_active' AND NOT r.mock AND EXISTS (
              SELECT 1 FROM numbers n WHERE n.workspace_id = r.workspace_id AND n.status = 'active' AND n.ordered
                AND n.type = 'local' AND (n.campaign_assignment IS NULL OR n.campaign_assignment = 'pending'))
            ORDER BY r.workspace_id LIMIT ${limit}`
        ).pipe(Effect.map((rs) => rs.map((r) => r.workspace_id))),
      byRegistryId: (kind, id) =>
        Effect.orDie(
          kind === "brand"
            ? sql<
              { workspace_id: string }
            >`SELECT workspace_id FROM texting_registrations WHERE registry_brand_id = ${id} AND NOT mock LIMIT 1`
            : sql<
              { workspace_id: string }
            >`SELECT workspace_id FROM texting_registrations WHERE registry_campaign_id = ${id} AND NOT mock LIMIT 1`
        ).pipe(Effect.map((rs) => Option.fromNullable(rs[0]?.workspace_id)))
    }))
)
