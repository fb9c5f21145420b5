/** Temporary directories for a test file, removed after its tests: `const tempDir = tempDirs("e2e")`. */
import { mkdtempSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

export const tempDirs = (label: string): () => string => {
  const dirs: Array<string> = []
  // Removed off the event loop: a synchronous removal of a large tree (an installed node_modules)
  // blocks the worker past vitest's RPC timeout on a loaded machine, which fails the run.
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))), 600_000)
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `switchboard-${label}-`))
    dirs.push(dir)
    return dir
  }
}
