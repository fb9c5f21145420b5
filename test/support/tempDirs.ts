/** Temporary directories for a test file, removed after its tests: `const tempDir = tempDirs("e2e")`. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

export const tempDirs = (label: string): () => string => {
  const dirs: Array<string> = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `switchboard-${label}-`))
    dirs.push(dir)
    return dir
  }
}
