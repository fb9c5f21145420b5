/**
 * `npm run build` makes every bundle with esbuild; `node apps/server/build.mjs <target>...` only those
 * named (`npm start` builds `server console`, `npm run start:deno` `deno console`, `npm run admin` `cli`):
 * - `server`: apps/server/node.ts with its dependencies into dist/server.mjs, which Node runs without
 *   tsx's loader. The loader keeps its own thread and heap, and the bundle lets V8 hold one module
 *   instead of thousands, so the server idles in less memory (docs/operating.md, "Memory and Node
 *   flags"; npm run bench:boot measures it).
 * - `deno`: apps/server/deno.ts into dist/server.deno.mjs, for the same reason, and Deno transpiles none.
 * - `console`: the web console (apps/console) into dist/console: index.html and assets/ with hashed
 *   names, which the server serves at /app (adapters/http/console.ts).
 * - `cli`: the admin CLI (apps/cli/main.ts) into dist/cli.mjs, which `npm run admin` runs
 *   (apps/cli/admin.mjs), so a command starts without tsx's loader.
 *
 * Each is skipped when up to date: its manifest (dist/<bundle>.inputs.json)
 * keeps every input of its last build (sources, dependencies, this script, npm's record of
 * node_modules) with its size and mtime, and any difference rebuilds it. Each file is written beside
 * its target and renamed over it, so processes starting at once never read a half-written bundle.
 *
 * Plain JavaScript, run by Node itself: it must run before anything can load TypeScript.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "../..")
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

const upToDate = (manifest, output) => {
  try {
    const inputs = JSON.parse(readFileSync(manifest, "utf8"))
    return stamp(relative(root, output)) !== null && Object.entries(inputs).every(([file, was]) => stamp(file) === was)
  } catch {
    return false
  }
}

const writeAtomically = (path, contents) => {
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, contents)
  renameSync(tmp, path)
}

/**
 * Runs `make` (esbuild's options; `finish` writes what esbuild answered) unless `output` and every
 * input in `manifest` are as they were, then records the inputs.
 */
const bundle = async ({ manifest, output, options, finish, inputs = [] }) => {
  if (upToDate(manifest, output)) return
  const startedAt = Date.now()
  // Loaded only to build: an up-to-date start costs a few stat calls.
  const { build } = await import("esbuild")
  const result = await build({
    absWorkingDir: root,
    bundle: true,
    metafile: true,
    write: false,
    logLevel: "warning",
    ...options
  })
  finish(result)
  const files = [...Object.keys(result.metafile.inputs), ...extraInputs, ...inputs]
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
  else {
    writeAtomically(
      manifest,
      JSON.stringify(Object.fromEntries(files.map((file) => [file, stamp(file)])), null, 1) + "\n"
    )
  }
}

/** A Node program and its dependencies in one ES module. */
const nodeBundle = (entryPoint, outfile) => ({
  manifest: outfile.replace(/\.mjs$/, ".inputs.json"),
  output: outfile,
  options: {
    entryPoints: [entryPoint],
    outfile,
    platform: "node",
    format: "esm",
    target: "node20",
    // PGlite reads its WebAssembly and data files next to its own module: it stays in node_modules.
    external: ["@electric-sql/pglite"],
    // Identifiers are kept, so stack traces name the functions.
    minifyWhitespace: true,
    minifySyntax: true,
    // Dependencies published as CommonJS call require(), which an ES module lacks.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" }
  },
  finish: (result) => {
    for (const file of result.outputFiles) writeAtomically(file.path, file.contents)
  }
})

// The console: one script and one stylesheet with content hashes in their names (cached for good by
// browsers), and index.html naming them (never cached). Assets of earlier builds are removed.
const consoleDir = join(root, "dist/console")
const consoleTemplate = "apps/console/index.html"
const consoleBundle = {
  manifest: join(root, "dist/console.inputs.json"),
  output: join(consoleDir, "index.html"),
  inputs: [consoleTemplate],
  options: {
    entryPoints: ["apps/console/main.tsx"],
    outdir: consoleDir,
    entryNames: "assets/console-[hash]",
    platform: "browser",
    format: "esm",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "none"
  },
  finish: (result) => {
    const assets = result.outputFiles.map((file) => ({ file, name: basename(file.path) }))
    for (const { file } of assets) writeAtomically(file.path, file.contents)
    const named = (ext) => assets.find(({ name }) => name.endsWith(ext))?.name
    const html = readFileSync(join(root, consoleTemplate), "utf8")
      .replace("%SCRIPT%", `/app/assets/${named(".js")}`)
      .replace("%STYLES%", `/app/assets/${named(".css")}`)
    writeAtomically(join(consoleDir, "index.html"), html)
    const current = new Set(assets.map(({ name }) => name))
    for (const name of readdirSync(join(consoleDir, "assets"))) {
      if (!current.has(name) && !name.endsWith(".tmp")) rmSync(join(consoleDir, "assets", name), { force: true })
    }
  }
}

const targets = {
  server: nodeBundle("apps/server/node.ts", join(root, "dist/server.mjs")),
  // Deno runs a bundle too (npm run start:deno): one module instead of thousands of sources.
  deno: nodeBundle("apps/server/deno.ts", join(root, "dist/server.deno.mjs")),
  console: consoleBundle,
  cli: nodeBundle("apps/cli/main.ts", join(root, "dist/cli.mjs"))
}

/** Builds the named targets (every one by default), each only when out of date. */
export const buildTargets = async (names = Object.keys(targets)) => {
  for (const name of names) {
    if (!Object.hasOwn(targets, name)) throw new Error(`No build target ${name}: ${Object.keys(targets).join(", ")}`)
    await bundle(targets[name])
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildTargets(process.argv.length > 2 ? process.argv.slice(2) : undefined)
}
