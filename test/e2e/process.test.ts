/**
 * The server as `npm start` and `npm run start:deno` run it, stopped the ways supervisors and
 * terminals stop it: every process npm started is gone within seconds, the port is closed and the
 * DATA_DIR lock released, and boot and shutdown are logged step by step, with no warning from the
 * runtime.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { lockPath } from "../../adapters/pglite/dataDirLock.ts"
import { alive, freePort } from "../support/server.ts"

const root = resolve(import.meta.dirname, "../..")
const dataDirs: Array<string> = []
afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** Pids of live processes in process group `pgid`, from /proc. */
const groupMembers = (pgid: number) =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8")
        // After the command name: state, ppid, pgrp, ...
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return Number(pgrp) === pgid && state !== "Z"
      } catch {
        return false
      }
    })
    .map(Number)

const portOpen = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), done(true)))
    socket.once("error", () => done(false))
  })

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms: number, output: () => string) => {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${ms} ms:\n${output()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** `npm <script>` in its own process group (as a terminal or supervisor runs it) on `dataDir`, until "Listening on". */
const start = async (script: ReadonlyArray<string>, dataDir: string) => {
  const port = await freePort()
  const npm = spawn("npm", [...script], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", NO_COLOR: "1", DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let out = ""
  npm.stdout!.on("data", (d) => (out += d))
  npm.stderr!.on("data", (d) => (out += d))
  const output = () => out
  await until("Listening", () => /Listening on/.test(out) || npm.exitCode !== null, 180_000, output)
  const server = Number(/Configuration read \(pid (\d+)/.exec(out)?.[1])
  expect(alive(server)).toBe(true)
  expect(await portOpen(port)).toBe(true)
  const gone = async () => {
    await until(
      "every process of the group gone",
      () => groupMembers(npm.pid!).length === 0 && !alive(server),
      10_000,
      output
    )
    expect(await portOpen(port)).toBe(false)
    expect(existsSync(lockPath(dataDir))).toBe(false)
    // Deprecation and other runtime warnings ("DeprecationWarning", Deno's "warning: Use of deprecated").
    expect(out).not.toMatch(/deprecat/i)
  }
  return { npm: npm.pid!, server, output, gone }
}

/** Indexes of `lines` in `output`, each found after the previous one. */
const inOrder = (output: string, lines: ReadonlyArray<RegExp>) => {
  let from = 0
  return lines.map((line) => {
    const at = output.slice(from).search(line)
    if (at < 0) throw new Error(`${line} not found after position ${from}:\n${output}`)
    from += at
    return line.source
  })
}

describe.each([
  { command: "npm start", args: ["start"] },
  { command: "npm run start:deno", args: ["run", "start:deno"] }
])("$command", ({ args }) => {
  // One DATA_DIR per command, shared by its tests: each boot after the first takes the lock the one before released.
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-process-"))
  dataDirs.push(dataDir)
  const npmStart = () => start(args, dataDir)

  it(
    "stops on SIGTERM to the npm process, leaving no process behind; boot and shutdown are logged in order",
    async () => {
      const run = await npmStart()
      // On the embedded database both runtimes get --expose-gc: the first boot's garbage (PGlite's initdb) is collected once it listens.
      await until("the memory line", () => /Memory after boot/.test(run.output()), 10_000, run.output)
      process.kill(run.npm, "SIGTERM")
      await run.gone()
      const out = run.output()
      inOrder(out, [
        /Configuration read \(pid \d+, modules loaded in \d+ ms\)/,
        /Database: embedded PGlite opened at .*\/pglite \(\d+ ms\)/,
        /Migrations: [1-9]\d* applied \(\d+ ms\)/,
        /Secrets loaded \(\d+ ms\)/,
        /Listening on http:\/\/127\.0\.0\.1:\d+ \(booted in \d+ ms\)/,
        /Memory after boot: \d+ MB resident, garbage collected in \d+ ms/,
        /Stopping/,
        /Draining: 0 request\(s\) in flight/,
        /Stopped \(\d+ ms\)/
      ])
      // Started concurrently: each logged once, before Listening.
      const listening = out.search(/Listening on/)
      for (const started of [/Webhook worker started \(\d+ ms\)/, /Registry poller started \(\d+ ms\)/]) {
        expect(out.search(started)).toBeGreaterThan(-1)
        expect(out.search(started)).toBeLessThan(listening)
      }
    },
    240_000
  )

  it("stops once on Ctrl-C (SIGINT to the whole group: npm relays it a second time)", async () => {
    const run = await npmStart()
    process.kill(-run.npm, "SIGINT")
    await run.gone()
    // A warm boot applies no migration; the relayed second SIGINT did not cut the drain short.
    expect(run.output()).toMatch(/Migrations: 0 applied/)
    expect(run.output().match(/Stopped \(\d+ ms\)/g)).toHaveLength(1)
  }, 240_000)

  it("stops by itself when npm is killed outright (SIGKILL reaches npm only)", async () => {
    const run = await npmStart()
    process.kill(run.npm, "SIGKILL")
    await run.gone()
    expect(run.output()).toMatch(/npm \(pid \d+\) is gone; stopping/)
  }, 240_000)
})
