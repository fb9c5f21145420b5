/**
 * `npm pack` (and `npm publish`) runs this first, as package.json's `prepack`: it compiles the package's
 * entry points and everything they import into dist/package as ES modules with type declarations,
 * which Node runs without a TypeScript loader.
 *
 * deno.json's "exports" is the one list of entry points (JSR publishes those TypeScript sources as they
 * are). package.json's "exports" must name the same entries, each pointing at its compiled files; this
 * script stops with the expected value when they differ, so an entry is added in deno.json and then
 * copied from the message here.
 *
 * Plain JavaScript over TypeScript's compiler API: the compiler options are tsconfig.json's, so the
 * package is checked exactly as `npm run typecheck` checks the code.
 */
import { readFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const outDir = "dist/package"
const readJson = (file) => JSON.parse(readFileSync(join(root, file), "utf8"))

/** The compiled files of a source entry: `./core/index.ts` -> its .d.ts and .js under outDir. */
const compiled = (source) => {
  const base = `./${outDir}/${source.replace(/^\.\//, "").replace(/\.ts$/, "")}`
  return { types: `${base}.d.ts`, import: `${base}.js` }
}

const entries = readJson("deno.json").exports
const expected = Object.fromEntries(Object.entries(entries).map(([name, source]) => [name, compiled(source)]))
if (JSON.stringify(readJson("package.json").exports) !== JSON.stringify(expected)) {
  console.error(`package.json "exports" must follow deno.json's:\n"exports": ${JSON.stringify(expected, null, 2)}`)
  process.exit(1)
}

const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
    throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
  }
})
const options = {
  ...config.options,
  noEmit: false,
  declaration: true,
  // The sources import `./x.ts` (as Deno requires); Node needs `./x.js`.
  rewriteRelativeImportExtensions: true,
  rootDir: root,
  outDir: join(root, outDir)
}

rmSync(join(root, outDir), { recursive: true, force: true })
const program = ts.createProgram(Object.values(entries).map((source) => join(root, source)), options)
const emitted = program.emit()
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics]
if (diagnostics.length > 0 || emitted.emitSkipped) {
  console.error(ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n"
  }))
  process.exit(1)
}
