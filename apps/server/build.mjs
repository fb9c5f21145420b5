/**
 * `npm run build` (and `npm start`'s first step): bundles apps/server/node.ts with its dependencies
 * into dist/server.mjs, which Node runs without tsx's loader. The loader keeps its own thread and
 * heap, and the bundle lets V8 hold one module instead of thousands, so the server idles in less
 * memory (docs/operating.md, "Memory and Node flags"; npm run bench:boot measures it).
 *
 * Skipped when the bundle is up to date: dist/server.inputs.json keeps every input of the last
 * build (sources, dependencies, this script, npm's record of node_modules) with its size and mtime,
 * and any difference rebuilds. Each file is written beside its target and renamed over it, so
 * processes starting at once never read a half-written bundle.
 *
 * Plain JavaScript, run by Node itself: it must run before anything can load TypeScript.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "../..")
const outfile = join(root, "dist/server.mjs")
const manifest = join(root, "dist/server.inputs.json")
// Inputs esbuild does not see: this script (the build options) and npm's record of the installed tree.
const extraInputs = [
  relative(root, fileURLToPath(import.meta.url)),
  "node_modules/.package-lock.json",
  "package.json",
  "tsconfig.json"
]

/** A file's size and mtime, or null when it is gone. */
const stamp = (file) => {
  try {
    const s = statSync(join(root, file))
    return `${s.size}:${s.mtimeMs}`
  } catch {
    return null
  }
}

const upToDate = () => {
  try {
    const inputs = JSON.parse(readFileSync(manifest, "utf8"))
    return stamp(relative(root, outfile)) !== null && Object.entries(inputs).every(([file, was]) => stamp(file) === was)
  } catch {
    return false
  }
}

const writeAtomically = (path, contents) => {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, contents)
  renameSync(tmp, path)
}

if (!upToDate()) {
  const startedAt = Date.now()
  // Loaded only to build: an up-to-date start costs a few stat calls.
  const { build } = await import("esbuild")
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["apps/server/node.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // PGlite reads its WebAssembly and data files next to its own module: it stays in node_modules.
    external: ["@electric-sql/pglite"],
    // Identifiers are kept, so stack traces name the functions.
    minifyWhitespace: true,
    minifySyntax: true,
    // Dependencies published as CommonJS call require(), which an ES module lacks.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    metafile: true,
    write: false,
    logLevel: "warning"
  })
  mkdirSync(dirname(outfile), { recursive: true })
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
  const files = [...Object.keys(result.metafile.inputs), ...extraInputs]
  // A file saved while esbuild ran may be in the bundle as it was before: then no manifest, so the
  // next start builds again rather than trusting this bundle.
  const changedSince = files.some((file) => {
    try {
      return statSync(join(root, file)).mtimeMs >= startedAt
    } catch {
      return false
    }
  })
  if (changedSince) rmSync(manifest, { force: true })
  else {writeAtomically(
      manifest,
      JSON.stringify(Object.fromEntries(files.map((file) => [file, stamp(file)])), null, 1) + "\n"
    )}
}
