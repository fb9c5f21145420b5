/**
 * The programs of the docs are programs readers copy: each must typecheck against the package's own
 * exports (`switchboard/core`, `switchboard/adapters/memory`, `switchboard/client`) and print what
 * its comment says. They are read from the pages, so the test follows every edit of them. The typed
 * client's example (docs/client.md) runs against a started server, with a number seeded to send from.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../support/server.ts"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "../..")

/** The first ```ts block under the heading. */
const codeBlockUnder = (markdown: string, heading: string): string => {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`))
  const block = /```ts\n([\s\S]*?)```/.exec(section)
  if (section.length === 0 || block === null) throw new Error(`no ts block under ${heading}`)
  return block[1]!
}

interface Example {
  readonly page: string
  readonly heading: string
  /** Runs against a started server: SWITCHBOARD_URL and SWITCHBOARD_API_KEY (its first-boot test key). */
  readonly server?: true
}

/** The headings whose first ts block is a runnable example. */
const examples: ReadonlyArray<Example> = [
  { page: "embedding.md", heading: "## Contacts in memory" },
  { page: "embedding.md", heading: "## The 10DLC registration pipeline" },
  { page: "client.md", heading: "## Send a message", server: true }
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

describe.each(examples)("docs/$page: $heading", ({ heading, page, server: needsServer }) => {
  let dir = ""
  let example = ""
  let server: RunningServer | undefined
  beforeAll(async () => {
    // Inside the repo (scratch/ is ignored by git), so the package's self-reference resolves.
    await mkdir(join(root, "scratch"), { recursive: true })
    dir = await mkdtemp(join(root, "scratch", "readme-"))
    example = codeBlockUnder(await readFile(join(root, "docs", page), "utf8"), heading)
    await writeFile(join(dir, "example.ts"), example)
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({ extends: "../../tsconfig.json", include: ["example.ts"] })
    )
    if (needsServer) server = await startWithNumber(join(dir, "data"))
  }, 300_000)
  afterAll(async () => {
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it("typechecks against the package exports", async () => {
    const tsc = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", dir], {
      cwd: root
    }).catch((e: { stdout: string }) => e)
    expect(tsc.stdout).toBe("")
  }, 300_000)

  it("runs and prints what its comment says", async () => {
    const env = server === undefined
      ? process.env
      : { ...process.env, SWITCHBOARD_URL: server.baseUrl, SWITCHBOARD_API_KEY: server.testKey! }
    const { stdout } = await run(join(root, "node_modules/.bin/tsx"), [join(dir, "example.ts")], { cwd: root, env })
    const expected = /console\.log\(.*\) \/\/ (.*)\n/.exec(example)?.[1]
    expect(expected).toBeDefined()
    expect(stdout.trim()).toBe(expected)
  }, 300_000)
})
