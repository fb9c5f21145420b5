/**
 * The admin CLI's operator views (issue 20): list and show workspaces, keys (never a secret) and
 * numbers, revoke a key, remove a seeded number; manage a workspace's members; the first-boot
 * message's next steps; which server it talks to (SWITCHBOARD_URL, else PORT) and what it says when
 * it cannot reach one. One real server, the CLI as `npm run admin` runs it: the bundle, through its
 * launcher (apps/cli/admin.mjs).
 */
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type RunningServer, startServer } from "../support/server.ts"

const root = resolve(import.meta.dirname, "../..")
const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), "switchboard-admin-cli-"))
let server: RunningServer
let env: Record<string, string>

beforeAll(async () => {
  // Built once here, so the commands below only check that the bundle is up to date.
  execFileSync(process.execPath, ["apps/server/build.mjs", "cli"], { cwd: root, stdio: "inherit" })
  server = await startServer("node", { DATA_DIR: dataDir, ADMIN_TOKEN: "cli-admin-token" })
  env = { SWITCHBOARD_URL: server.baseUrl, ADMIN_TOKEN: "cli-admin-token" }
}, 300_000)
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The CLI with `env` over the test's environment, less any SWITCHBOARD_URL or PORT of the runner's own. */
const adminWith = (extra: Record<string, string>, ...args: Array<string>) => {
  const { SWITCHBOARD_URL: _url, PORT: _port, ...inherited } = process.env
  return run(process.execPath, ["apps/cli/admin.mjs", ...args], { cwd: root, env: { ...inherited, ...extra } })
}
const admin = (...args: Array<string>) => adminWith(env, ...args)
const out = async (...args: Array<string>) => JSON.parse((await admin(...args)).stdout)
const refused = (...args: Array<string>) =>
  admin(...args).then(
    () => null,
    (e: { code: number; stderr: string }) => ({ code: e.code, error: JSON.parse(e.stderr).error })
  )

describe("admin CLI: what an operator who lost the first-boot output needs", () => {
  it("the first-boot message names the next steps", () => {
    const workspaceId = /\(([0-9a-f-]{36})\) on first boot/.exec(server.output())![1]
    expect(server.output()).toContain("Next steps:")
    expect(server.output()).toContain("npm run admin -- --help")
    // On a port other than the CLI's default, its commands name this server.
    const url = server.baseUrl.replace("127.0.0.1", "localhost")
    expect(server.output()).toContain(`SWITCHBOARD_URL=${url} npm run admin -- number add ${workspaceId} +14155550100`)
    expect(server.output()).toContain(`${server.baseUrl.replace("127.0.0.1", "localhost")}/v1/api/openapi.json`)
    // The docs it names exist: the page, and the section when one is named (`Docs: <page> ("<section>")`).
    const docs = /Docs: ([\w./-]+\.md)(?: \("([^"]+)"\))?/.exec(server.output())
    expect(docs).not.toBeNull()
    const page = readFileSync(resolve(root, docs![1]!), "utf8")
    if (docs![2] !== undefined) expect(page.split("\n")).toContain(`## ${docs![2]}`)
  })

  it("lists and shows workspaces", async () => {
    const { workspaces } = await out("workspace", "list")
    expect(workspaces.map((w: { name: string }) => w.name)).toEqual(["Default workspace"])
    const { workspace } = await out("workspace", "create", "Acme")
    const after = (await out("workspace", "list")).workspaces
    expect(after).toEqual([...workspaces, workspace])
    expect(await out("workspace", "get", workspace.id)).toEqual({ workspace })
  }, 600_000)

  it("lists and shows keys without their token or hash, revoked ones marked; revokes", async () => {
    const { workspace } = await out("workspace", "create", "Keys")
    const created =
      (await out("key", "create", workspace.id, "--kind", "live", "--scopes", "contacts:read", "--name", "crm")).key
    const other = (await out("key", "create", workspace.id, "--kind", "test")).key
    const listed = await admin("key", "list", workspace.id)
    expect(listed.stdout).not.toContain(created.token)
    expect(listed.stdout).not.toMatch(/"(token|hash)"/)
    const view = {
      id: created.id,
      workspaceId: workspace.id,
      kind: "live",
      scopes: ["contacts:read"],
      name: "crm",
      createdAt: created.createdAt,
      revokedAt: null
    }
    expect(JSON.parse(listed.stdout).keys).toEqual([
      view,
      expect.objectContaining({ id: other.id, kind: "test", revokedAt: null })
    ])
    expect(await out("key", "get", created.id)).toEqual({ key: view })
    expect(await out("key", "revoke", created.id)).toEqual({ revoked: true })
    const revoked = (await out("key", "get", created.id)).key
    expect(revoked.revokedAt).toEqual(expect.any(String))
    expect((await out("key", "list", workspace.id)).keys[0]).toEqual(revoked)
    const before = await fetch(`${server.baseUrl}/v1/api/contacts`, {
      headers: { authorization: `Bearer ${created.token}` }
    })
    expect(before.status).toBe(401)
    expect(await refused("key", "get", crypto.randomUUID())).toMatchObject({ code: 1, error: { code: "not_found" } })
    expect(await refused("key", "list", crypto.randomUUID())).toMatchObject({ code: 1, error: { code: "not_found" } })
  }, 600_000)

  it("lists numbers and removes a seeded one, which is then free to seed again", async () => {
    const { workspace } = await out("workspace", "create", "Numbers")
    const e164 = `+1415555${String(Math.floor(Math.random() * 1e4)).padStart(4, "0")}`
    const { number } = await out("number", "add", workspace.id, e164)
    expect(await out("number", "list", workspace.id)).toEqual({ numbers: [number] })
    // Another workspace cannot remove it.
    const { workspace: other } = await out("workspace", "create", "Other")
    expect(await refused("number", "remove", other.id, e164)).toMatchObject({ code: 1, error: { code: "not_found" } })
    expect(await out("number", "remove", workspace.id, e164)).toEqual({ deleted: true })
    expect(await out("number", "list", workspace.id)).toEqual({ numbers: [] })
    expect(await refused("number", "remove", workspace.id, e164)).toMatchObject({
      code: 1,
      error: { code: "not_found" }
    })
    expect(await out("number", "add", other.id, e164)).toEqual({ number })
  }, 600_000)

  it("manages members: the first boot's owner, add, update, the last owner kept, remove", async () => {
    const { workspaces } = await out("workspace", "list")
    const first = workspaces.find((w: { name: string }) => w.name === "Default workspace")
    const { members: [owner] } = await out("member", "list", first.id)
    expect(owner).toMatchObject({ email: "owner@localhost", name: "Owner", role: "owner", phone: null })
    // The sign-in link printed beside the test key is that owner's.
    const link = new URL(server.signInLink!)
    const opened = await fetch(`${server.baseUrl}${link.pathname}`, { redirect: "manual" })
    expect(opened.status).toBe(303)
    expect(opened.headers.get("set-cookie")).toMatch(/^sb_session=/)

    const { workspace } = await out("workspace", "create", "Team")
    const { member: grace } = await out(
      "member",
      "add",
      workspace.id,
      "Grace@Example.com",
      "--name",
      "Grace Hopper",
      "--role",
      "owner",
      "--phone",
      "(415) 555-0123"
    )
    expect(grace).toMatchObject({
      email: "grace@example.com",
      name: "Grace Hopper",
      role: "owner",
      phone: "+14155550123"
    })
    const { member: ada } = await out(
      "member",
      "add",
      workspace.id,
      "ada@example.com",
      "--name",
      "Ada",
      "--role",
      "member"
    )
    expect(await out("member", "list", workspace.id)).toEqual({ members: [grace, ada] })
    // Refused before sending (the admin API's own schema), and by the server.
    expect(await refused("member", "add", workspace.id, "x@example.com", "--name", "X", "--role", "boss"))
      .toMatchObject({
        code: 1,
        error: { code: "invalid_argument" }
      })
    expect(await refused("member", "add", workspace.id, "ADA@example.com", "--name", "A", "--role", "admin"))
      .toMatchObject({ code: 1, error: { code: "failed_precondition" } })

    const { member: promoted } = await out("member", "update", ada.id, "--role", "owner", "--phone", "4155550124")
    expect(promoted).toEqual({ ...ada, role: "owner", phone: "+14155550124" })
    expect(await out("member", "update", ada.id, "--phone", "none")).toEqual({ member: { ...promoted, phone: null } })
    expect(await out("member", "remove", grace.id)).toEqual({ deleted: true })
    expect(await refused("member", "remove", ada.id)).toMatchObject({
      code: 1,
      error: { code: "failed_precondition", message: expect.stringContaining("last owner") }
    })
    expect(await refused("member", "update", ada.id, "--role", "admin")).toMatchObject({
      code: 1,
      error: { code: "failed_precondition" }
    })
    expect(await refused("member", "remove", grace.id)).toMatchObject({ code: 1, error: { code: "not_found" } })
  }, 600_000)

  it("lists every new command in its help", async () => {
    const help = (await admin("--help")).stdout
    for (
      const command of [
        "workspace list",
        "key list <",
        "key get <",
        "number list <",
        "member list <",
        "member add <",
        "member update <",
        "member remove <",
        "number remove <",
        "db dump <",
        "db load <"
      ]
    ) {
      expect(help).toContain(`  ${command}`)
    }
  })
})

describe("admin CLI: which server it talks to", () => {
  const port = () => new URL(server.baseUrl).port

  it(
    "talks to http://localhost:$PORT without SWITCHBOARD_URL, as the first-boot message's commands assume",
    async () => {
      const { stdout } = await adminWith({ ADMIN_TOKEN: "cli-admin-token", PORT: port() }, "workspace", "list")
      expect(JSON.parse(stdout).workspaces[0]).toMatchObject({ name: "Default workspace" })
    },
    120_000
  )

  it("prefers SWITCHBOARD_URL to PORT", async () => {
    const { stdout } = await adminWith(
      { ADMIN_TOKEN: "cli-admin-token", SWITCHBOARD_URL: server.baseUrl, PORT: String(await freePort()) },
      "workspace",
      "list"
    )
    expect(JSON.parse(stdout).workspaces[0]).toMatchObject({ name: "Default workspace" })
  }, 120_000)

  it("names the URL it tried and how to point it elsewhere when nothing answers, without a stack trace", async () => {
    const nobody = String(await freePort())
    const failed = await adminWith({ ADMIN_TOKEN: "cli-admin-token", PORT: nobody }, "workspace", "list").then(
      () => null,
      (e: { code: number; stdout: string; stderr: string }) => e
    )
    expect(failed).not.toBeNull()
    expect(failed!.code).toBe(1)
    expect(failed!.stdout).toBe("")
    expect(failed!.stderr).toContain(`Cannot reach the Switchboard server at http://localhost:${nobody}`)
    expect(failed!.stderr).toContain("SWITCHBOARD_URL=")
    expect(failed!.stderr).toContain("PORT=<port>")
    expect(failed!.stderr).not.toMatch(/^\s+at /m)
  }, 120_000)
})
