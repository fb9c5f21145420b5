/**
 * vitest globalSetup: one Postgres cluster for the whole run (or
 * `TEST_DATABASE_URL` when set). Tests read the URL with `inject("postgresUrl")`
 * (null when Postgres is unavailable and CI is not "true"); worker code can also
 * read `process.env.TEST_DATABASE_URL`, which is set here before the workers are
 * forked. Use `freshDatabase(url)` from ./postgres.ts to isolate a test file.
 *
 * Beside it, the two databases every in-memory PGlite of the tests starts from
 * (./pglite.ts): PGlite's empty one and the migrated one, made once here rather than
 * by an initdb and a migration run per database.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import * as PgliteClient from "../../adapters/pglite/PgliteClient.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import { startPostgres } from "./postgres.ts"

export interface PgliteTemplates {
  /** A fresh PGlite's data dir as a tarball (PGlite's `dumpDataDir`). */
  readonly empty: string
  /** The same with every migration applied. */
  readonly migrated: string
}

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string | null
    pgliteTemplates: PgliteTemplates
  }
}

/** Both templates, as files in `dir`, from one data dir: dumped as created, then once migrated. */
const makePgliteTemplates = async (dir: string): Promise<PgliteTemplates> => {
  const dataDir = join(dir, "pglite")
  const dump = async (file: string) => {
    const db = await PGlite.create(PgliteClient.pgliteOptions(dataDir))
    try {
      writeFileSync(file, new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer()))
    } finally {
      await db.close()
    }
    return file
  }
  const empty = await dump(join(dir, "empty.tar"))
  await Effect.runPromise(
    Layer.build(Migrate.layer).pipe(
      Effect.scoped,
      Effect.provide(PgliteClient.layer({ dataDir })),
      Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  return { empty, migrated: await dump(join(dir, "migrated.tar")) }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const templatesDir = await mkdtemp(join(tmpdir(), "switchboard-pglite-templates-"))
  const [handle, templates] = await Promise.all([startPostgres(), makePgliteTemplates(templatesDir)])
  const url = handle?.url ?? null
  project.provide("postgresUrl", url)
  project.provide("pgliteTemplates", templates)
  const previous = process.env["TEST_DATABASE_URL"]
  if (url !== null) process.env["TEST_DATABASE_URL"] = url
  return async () => {
    if (previous === undefined) delete process.env["TEST_DATABASE_URL"]
    else process.env["TEST_DATABASE_URL"] = previous
    await handle?.stop()
    await rm(templatesDir, { recursive: true, force: true })
  }
}
