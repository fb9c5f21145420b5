/**
 * The package as embedders get it: `npm pack` (its prepack compiles dist/package), the tarball
 * installed into a scratch Node project outside the repo, and there, with no TypeScript loader,
 * every export imports under plain `node`, and the programs of docs/embedding.md and docs/client.md
 * typecheck against the installed declarations, compile, run and print what their last comment says
 * (the typed client's against a started server, with a number seeded to send from). The programs are
 * read from the pages, so the test follows every edit of them. Also: JSR accepts the same exports
 * (`deno publish --dry-run`).
 */
import { execFile } from "node:child_process"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "../..")
const tempDir = tempDirs("package")

/** npm as a user runs it: without the npm_* settings the outer `npm test` passes down. */
const npm = (args: ReadonlyArray<string>, cwd: string) =>
  run("npm", args, {
    cwd,
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_"))),
    maxBuffer: 64 * 1024 * 1024
  })

/** The first ```ts block under the heading. */
const codeBlockUnder = (markdown: string, heading: string): string => {
  const start = markdown.indexOf(`\n${heading}\n`)
  const block = /```ts\n([\s\S]*?)```/.exec(markdown.slice(start))
  if (start < 0 || block === null) throw new Error(`no ts block under ${heading}`)
  return block[1]!
}

/**
 * The headings whose first ts block is a runnable program, and its file name. `server`: it runs
 * against a started server (SWITCHBOARD_URL and SWITCHBOARD_API_KEY, the first-boot test key).
 */
const examples = [
  { page: "embedding.md", heading: "## Contacts in memory", file: "contacts" },
  { page: "embedding.md", heading: "## The 10DLC registration pipeline", file: "registration" },
  { page: "client.md", heading: "## Send a message", file: "client", server: true }
]

const ADMIN_TOKEN = "docs-admin-token"

/** A server with a number to send from, as docs/client.md asks the reader to prepare. */
const startWithNumber = async (dataDir: string): Promise<RunningServer> => {
  const server = await startServer("node", { DATA_DIR: dataDir, ADMIN_TOKEN })
  const workspaceId = /\(([0-9a-f-]{36})\) on first boot/.exec(server.output())![1]
  const seeded = await fetch(`${server.baseUrl}/v1/admin/workspaces/${workspaceId}/numbers`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ e164: "+14155550100" })
  })
  expect(seeded.status, await seeded.text()).toBe(201)
  return server
}

describe("the npm package in a plain Node project", () => {
  let project = ""
  let typecheck = ""
  const programs = new Map<string, string>()
  let server: RunningServer | undefined
  afterAll(() => server?.stop())

  beforeAll(async () => {
    const dir = tempDir()
    const packed = await npm(["pack", "--json", "--pack-destination", dir], root)
    const tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
    project = join(dir, "project")
    await mkdir(project)
    await writeFile(join(project, "package.json"), JSON.stringify({ name: "embedder", private: true, type: "module" }))
    await npm(["install", tarball, "--prefer-offline", "--no-audit", "--no-fund"], project)

    for (const { file, heading, page } of examples) {
      const program = codeBlockUnder(await readFile(join(root, "docs", page), "utf8"), heading)
      programs.set(file, program)
      await writeFile(join(project, `${file}.ts`), program)
    }
    // What a Node project's tsconfig says: Node's own module resolution, so the package's "types" conditions.
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "DOM"],
          // A Node project has Node's types (the client's program reads process.env).
          typeRoots: [join(root, "node_modules/@types")],
          types: ["node"],
          strict: true,
          outDir: "out"
        },
        include: ["*.ts"]
      })
    )
    // tsc writes the JavaScript even when it reports errors, so the programs run whatever it says.
    const tsc = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", project])
      .catch((e: { stdout: string }) => e)
    typecheck = tsc.stdout
  }, 900_000)

  it("imports every export with plain node", async () => {
    const exported = Object.keys(JSON.parse(await readFile(join(root, "package.json"), "utf8")).exports as object)
    const specifiers = exported.map((name) => name.replace(/^\./, "switchboard"))
    const { stdout } = await run(process.execPath, [
      "--input-type=module",
      "-e",
      `for (const s of ${JSON.stringify(specifiers)}) console.log(s, Object.keys(await import(s)).length > 0)`
    ], { cwd: project })
    expect(stdout.trim().split("\n")).toEqual(specifiers.map((s) => `${s} true`))
  }, 300_000)

  it("typechecks the programs against the installed declarations", () => {
    expect(typecheck).toBe("")
  })

  it.each(examples)(
    "runs $heading with plain node and prints what its comment says",
    async ({ file, server: needsServer }) => {
      if (needsServer) server = await startWithNumber(join(tempDir(), "data"))
      const env = server === undefined
        ? process.env
        : { ...process.env, SWITCHBOARD_URL: server.baseUrl, SWITCHBOARD_API_KEY: server.testKey! }
      const { stdout } = await run(process.execPath, [join(project, "out", `${file}.js`)], { cwd: project, env })
      const expected = /console\.log\(.*\) \/\/ (.*)\n/.exec(programs.get(file)!)?.[1]
      expect(expected).toBeDefined()
      expect(stdout.trim()).toBe(expected)
    },
    300_000
  )
})

describe("the JSR package", () => {
  it("passes deno publish --dry-run", async () => {
    const { stderr, stdout } = await run(
      join(root, "node_modules/deno/deno"),
      ["publish", "--dry-run", "--allow-dirty", "--allow-slow-types"],
      { cwd: root, env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 64 * 1024 * 1024 }
    )
    expect(`${stdout}${stderr}`).toContain("Dry run complete")
  }, 300_000)
})
