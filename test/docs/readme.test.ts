/**
 * The embedding examples (docs/embedding.md) are programs embedders copy: each must typecheck against
 * the package's own exports (`switchboard/core`, `switchboard/adapters/memory`) and print what its
 * comment says. The examples are read from docs/embedding.md, so the test follows every edit of them.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "../..")

/** The first ```ts block under the heading. */
const codeBlockUnder = (markdown: string, heading: string): string => {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`))
  const block = /```ts\n([\s\S]*?)```/.exec(section)
  if (section.length === 0 || block === null) throw new Error(`no ts block under ${heading}`)
  return block[1]!
}

/** The headings whose first ts block is a runnable embedding example. */
const examples = ["## Contacts in memory", "## The 10DLC registration pipeline"]

describe.each(examples)("docs/embedding.md: %s", (heading) => {
  let dir = ""
  let example = ""
  beforeAll(async () => {
    // Inside the repo (scratch/ is ignored by git), so the package's self-reference resolves.
    await mkdir(join(root, "scratch"), { recursive: true })
    dir = await mkdtemp(join(root, "scratch", "readme-"))
    example = codeBlockUnder(await readFile(join(root, "docs", "embedding.md"), "utf8"), heading)
    await writeFile(join(dir, "example.ts"), example)
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({ extends: "../../tsconfig.json", include: ["example.ts"] })
    )
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("typechecks against the package exports", async () => {
    const tsc = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", dir], {
      cwd: root
    }).catch((e: { stdout: string }) => e)
    expect(tsc.stdout).toBe("")
  }, 300_000)

  it("runs and prints what its comment says", async () => {
    const { stdout } = await run(join(root, "node_modules/.bin/tsx"), [join(dir, "example.ts")], { cwd: root })
    const expected = /console\.log\(.*\) \/\/ (.*)\n/.exec(example)?.[1]
    expect(expected).toBeDefined()
    expect(stdout.trim()).toBe(expected)
  }, 300_000)
})
