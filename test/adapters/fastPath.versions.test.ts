/**
 * The fast path's patches (adapters/fastPath.ts) name the versions they were written against: an
 * upgrade of any of those packages fails here, pointing at the list, until the patches are checked
 * against the new version (or the server runs with FAST_PATH=false).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { matches, PATCHES } from "../../adapters/fastPath.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The installed version: the package's own package.json, or the Node running the tests. */
const installed = (name: string): string =>
  name === "node"
    ? process.versions.node
    : (JSON.parse(readFileSync(`${root}node_modules/${name}/package.json`, "utf8")) as { version: string }).version

// Deno reports the Node version it is compatible with; the Node server's patches are not in use there.
const underDeno = "Deno" in globalThis

describe("the fast path's patches and the installed versions", () => {
  it("every version is a `major.minor.x` line (Node's `major.x`)", () => {
    for (const patch of PATCHES) expect(patch.version, `${patch.package} in ${patch.file}`).toMatch(/^\d+(\.\d+)?\.x$/)
  })

  for (const name of [...new Set(PATCHES.map((p) => p.package))]) {
    it.skipIf(name === "node" && underDeno)(`${name} is the version the patches were written against`, () => {
      const have = installed(name)
      const patches = PATCHES.filter((p) => p.package === name)
      for (const patch of patches) {
        expect(
          matches(have, patch.version),
          `${name} is ${have}, the fast path was written against ${patch.version}: re-check the patches in ${patch.file} ` +
            `(${patch.what}) and update adapters/fastPath.ts, or run with FAST_PATH=false`
        ).toBe(true)
      }
    })
  }

  it("a version matches its own line only", () => {
    expect(matches("8.23.1", "8.23.x")).toBe(true)
    expect(matches("8.24.0", "8.23.x")).toBe(false)
    expect(matches("0.98.0", "0.97.x")).toBe(false)
    expect(matches("20.20.2", "20.x")).toBe(true)
    expect(matches("22.1.0", "20.x")).toBe(false)
  })
})
