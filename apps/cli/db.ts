/**
 * `npm run admin -- db dump|load <file>`: backup and restore of the embedded database (PGlite in
 * DATA_DIR/pglite). They open the files themselves, so they take the DATA_DIR lock like the
 * server does: a dump needs the server stopped (PGlite has one backend, and a copy taken under a
 * running server's writes would not be consistent); a load only goes into a DATA_DIR without a
 * database. The file is PGlite's own `dumpDataDir()` tarball (gzip). The secrets sealed in the
 * database open with DATA_DIR/secrets.key (or SECRETS_KEY), which is not in the tarball: keep it
 * with the dump.
 */
import type { PGlite } from "@electric-sql/pglite"
import { Data, Effect } from "effect"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as DataDirLock from "../../adapters/pglite/dataDirLock.ts"

export class DbCommandRefused extends Data.TaggedError("DbCommandRefused")<{ readonly message: string }> {}

const pgliteDir = (dataDir: string) => join(dataDir, "pglite")

/** Runs `use` on the DATA_DIR's PGlite, under its lock, and closes it. */
const withPglite = <A>(dataDir: string, options: { readonly loadDataDir?: Blob }, use: (db: PGlite) => Promise<A>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const me = yield* DataDirLock.acquire(dataDir)
      yield* Effect.addFinalizer(() => DataDirLock.release(dataDir, me))
      const db = yield* Effect.acquireRelease(
        // Imported here, so the CLI's other commands start without loading PGlite.
        Effect.promise(async () => {
          const [{ PGlite }, { pg_trgm }] = await Promise.all([
            import("@electric-sql/pglite"),
            import("@electric-sql/pglite/contrib/pg_trgm")
          ])
          return PGlite.create({ dataDir: pgliteDir(dataDir), extensions: { pg_trgm }, ...options })
        }),
        (db) => Effect.promise(() => db.close())
      )
      return yield* Effect.promise(() => use(db))
    })
  )

/** Writes the database to `file`; the answer names what it wrote. */
export const dump = (dataDir: string, file: string) =>
  Effect.gen(function*() {
    if (!existsSync(join(pgliteDir(dataDir), "PG_VERSION"))) {
      return yield* new DbCommandRefused({ message: `No embedded database in ${dataDir} (set DATA_DIR)` })
    }
    const bytes = yield* withPglite(dataDir, {}, async (db) =>
      new Uint8Array(await (await db.dumpDataDir("gzip")).arrayBuffer()))
    writeFileSync(file, bytes, { mode: 0o600 })
    return {
      dumped: file,
      bytes: bytes.length,
      keep: "DATA_DIR/secrets.key (unless SECRETS_KEY is set) with it: it opens the secrets sealed in the database"
    }
  })

/** Loads a dump into a DATA_DIR that has no database yet. */
export const load = (dataDir: string, file: string) =>
  Effect.gen(function*() {
    const target = pgliteDir(dataDir)
    if (existsSync(target) && readdirSync(target).length > 0) {
      return yield* new DbCommandRefused({ message: `${target} already holds a database: load into an empty DATA_DIR` })
    }
    if (!existsSync(file)) return yield* new DbCommandRefused({ message: `No such file: ${file}` })
    const blob = new Blob([readFileSync(file)])
    yield* withPglite(dataDir, { loadDataDir: blob }, (db) => db.query("SELECT 1"))
    return { loaded: file, into: target }
  })
