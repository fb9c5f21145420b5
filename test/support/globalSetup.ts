/**
 * vitest globalSetup: one Postgres cluster for the whole run (or
 * `TEST_DATABASE_URL` when set). Tests read the URL with `inject("postgresUrl")`
 * (null when Postgres is unavailable and CI is not "true"); worker code can also
 * read `process.env.TEST_DATABASE_URL`, which is set here before the workers are
 * forked. Use `freshDatabase(url)` from ./postgres.ts to isolate a test file.
 */
import type { TestProject } from "vitest/node"
import { startPostgres } from "./postgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string | null
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const handle = await startPostgres()
  const url = handle?.url ?? null
  project.provide("postgresUrl", url)
  const previous = process.env["TEST_DATABASE_URL"]
  if (url !== null) process.env["TEST_DATABASE_URL"] = url
  return async () => {
    if (previous === undefined) delete process.env["TEST_DATABASE_URL"]
    else process.env["TEST_DATABASE_URL"] = previous
    await handle?.stop()
  }
}
