/**
 * A start that cannot succeed stops before anything is written (apps/server/run.ts, config.ts): no
 * DATA_DIR, no embedded database, no first-boot workspace, so the next start is still a first boot
 * and prints its key. The first boot's key is printed only once the server listens. The real Node
 * server, spawned; the one-line messages themselves: test/e2e/operations.test.ts.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { connect, createServer, type Server } from "node:net"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, runUntilExit, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const tempDir = tempDirs("startup")
/** A DATA_DIR that does not exist yet: the server would create it. */
const freshDataDir = () => join(tempDir(), "data")

const root = resolve(import.meta.dirname, "../..")
const KEY = /svc_test_[0-9A-Za-z]{40}/

/** Whether a TCP connection to `port` is accepted now (one attempt). */
const accepts = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => done((socket.destroy(), true)))
    socket.once("error", () => done(false))
  })

describe("a first boot on a busy port", () => {
  let busy: Server
  let port: number
  beforeAll(async () => {
    port = await freePort()
    busy = createServer()
    await new Promise<void>((done) => busy.listen(port, "127.0.0.1", done))
  })
  afterAll(() => new Promise((done) => busy.close(done)))

  it(
    "prints no key, exits 1 and leaves no DATA_DIR; once the port is free, the next boot is the first and prints its key",
    async () => {
      const dataDir = freshDataDir()
      const { code, stdout, stderr } = await runUntilExit({ PORT: String(port), DATA_DIR: dataDir })
      expect({ code, stderr: stderr.trim() }).toEqual({
        code: 1,
        stderr: `Port ${port} is already in use (HOST 127.0.0.1); set PORT to another port`
      })
      expect(stdout + stderr).not.toMatch(KEY)
      expect(stdout).not.toContain("first boot")
      expect(existsSync(dataDir)).toBe(false)

      await new Promise((done) => busy.close(done))
      const server = await startServer("node", { PORT: String(port), DATA_DIR: dataDir }, 120_000)
      try {
        expect(server.testKey).toMatch(KEY)
        expect(server.output()).toContain("on first boot")
      } finally {
        await server.stop()
        busy = createServer()
        await new Promise<void>((done) => busy.listen(port, "127.0.0.1", done))
      }
    },
    240_000
  )
})

describe("the first boot's key", () => {
  it(
    "is printed with the port already bound: frozen as the key appears, the server's port accepts a connection",
    async () => {
      const port = await freePort()
      // Built by the suite above (startServer); spawned directly to watch its stdout as it comes.
      // (Before the key waited for the listener, this connection was refused.)
      const child = spawn(process.execPath, ["dist/server.mjs"], {
        cwd: root,
        env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), DATA_DIR: freshDataDir(), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise((done) => child.once("exit", done))
      let out = ""
      try {
        await new Promise<void>((done, fail) => {
          const watch = (d: Buffer) => {
            out += d
            if (!KEY.test(out)) return
            // Stopped at once, so what it had done by the key is what the connection finds: the
            // kernel completes a connection to a bound port for a stopped process too.
            child.kill("SIGSTOP")
            child.stdout.off("data", watch)
            done()
          }
          child.stdout.on("data", watch)
          child.once("exit", () => fail(new Error(`server exited before printing a key:\n${out}`)))
        })
        expect(await accepts(port), out).toBe(true)
      } finally {
        child.kill("SIGCONT")
        child.kill("SIGTERM")
        await exited
      }
    },
    240_000
  )
})

describe("a configuration error", () => {
  it.each<[Record<string, string>, RegExp]>([
    [{ PORT: "abc" }, /^Configuration error: PORT: expected an integer value/],
    [{ PORT: "70000" }, /^Configuration error: PORT: must be a port number \(0 to 65535\)$/],
    [
      { CARRIER: "telnyx", TELNYX_API_KEY: "KEY_x" },
      /^Configuration error: CARRIER=telnyx needs TELNYX_PUBLIC_KEY, TELNYX_MESSAGING_PROFILE_ID, TELNYX_CONNECTION_ID$/
    ],
    [
      { PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x" },
      /^Configuration error: PAYMENTS=stripe needs STRIPE_WEBHOOK_SECRET$/
    ],
    [
      { SMTP_URL: "smtp//user:hunter22@mail" },
      /^Configuration error: SMTP_URL: must be a URL: smtp:\/\/user:pass@host/
    ],
    [
      { SMTP_URL: "https://mail.example.com" },
      /^Configuration error: SMTP_URL: must be smtp:\/\/host or smtps:\/\/host/
    ],
    [{ SECRETS_KEY: "not-hex" }, /^Configuration error: SECRETS_KEY: must be 64 hex digits$/],
    [{ SECRETS_KEY_PREVIOUS: "abc" }, /^Configuration error: SECRETS_KEY_PREVIOUS: must be 64 hex digits$/],
    [{ PUBLIC_BASE_URL: "switchboard.example.com" }, /^Configuration error: PUBLIC_BASE_URL: must be a URL/],
    [
      { PUBLIC_BASE_URL: "https://example.com/switchboard" },
      /^Configuration error: PUBLIC_BASE_URL: must be an origin/
    ],
    [{ DATABASE_URL: "mysql://db/switchboard" }, /^Configuration error: DATABASE_URL: must be a URL such as postgres:/],
    [{ TELNYX_BASE_URL: "api.telnyx" }, /^Configuration error: TELNYX_BASE_URL: must be a URL/]
  ])("%o exits 1 naming it, before DATA_DIR exists", async (env, line) => {
    const dataDir = freshDataDir()
    const { code, stdout, stderr } = await runUntilExit({ PORT: "0", DATA_DIR: dataDir, ...env })
    expect({ code, stderr: stderr.trim() }).toEqual({ code: 1, stderr: expect.stringMatching(line) })
    expect(stdout + stderr).not.toContain("hunter22")
    expect(existsSync(dataDir)).toBe(false)
  }, 90_000)
})
