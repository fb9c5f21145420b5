/** Readiness in memory: the maps are always there and have no migrations. */
import { Effect, Layer } from "effect"
import { Readiness } from "../../core/health/readiness.ts"

export const layer = Layer.succeed(
  Readiness,
  Readiness.of({ check: Effect.succeed({ database: "ok", migrations: "ok" }) })
)
