/**
 * A fresh in-memory PGlite for a test, started from one of the run's templates (globalSetup.ts):
 * `empty`, as PGlite makes a new database, or `migrated`, with every migration applied and nothing
 * else. Loading a dump skips the initdb (and the migration run) each new database would repeat.
 */
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { inject } from "vitest"
import * as PgliteClient from "../../adapters/pglite/PgliteClient.ts"

/** Each template read once per test process. */
const dumps = new Map<string, Blob>()
const dumpOf = (file: string) => {
  const known = dumps.get(file)
  if (known !== undefined) return known
  const blob = new Blob([readFileSync(file)])
  dumps.set(file, blob)
  return blob
}

/** A new database at each build of the layer, as `PgliteClient.layer` makes one. */
export const freshPglite = (
  template: "empty" | "migrated",
  options: Omit<PgliteClient.PgliteClientConfig, "dataDir" | "loadDataDir"> = {}
) =>
  Layer.unwrapEffect(
    Effect.sync(() => PgliteClient.layer({ ...options, loadDataDir: dumpOf(inject("pgliteTemplates")[template]) }))
  )
