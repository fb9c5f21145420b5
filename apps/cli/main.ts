/**
 * `npm run admin -- <command>`: the operator CLI over the admin API (CONTRACT.md).
 * Reads SWITCHBOARD_URL (default http://localhost:$PORT or :8080) and ADMIN_TOKEN from the environment.
 * Prints the JSON answer; exits 1 with the error envelope on failure.
 */
import { parseArgs } from "node:util"

const usage = `Usage: npm run admin -- <command> [options]

  workspace create <name> [--billing '<json>']
  workspace get <workspaceId>
  workspace update <workspaceId> [--name <name>] [--billing '<json>']
  key create <workspaceId> --kind live|test [--scopes a,b,...] [--name <name>]
  key revoke <keyId>
  number add <workspaceId> <e164> [--type local|toll_free]
  ledger <workspaceId>
  audit-log <workspaceId>
  mail <workspaceId>

Environment: ADMIN_TOKEN (required), SWITCHBOARD_URL (default http://localhost:8080)`

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    billing: { type: "string" },
    name: { type: "string" },
    kind: { type: "string" },
    scopes: { type: "string" },
    type: { type: "string" },
    help: { type: "boolean", short: "h" }
  }
})

const fail = (message: string): never => {
  console.error(message)
  process.exit(1)
}

const json = (text: string | undefined, flag: string) => {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return fail(`--${flag} must be JSON`)
  }
}

const enc = encodeURIComponent
const [group, action, a, b] = positionals

const route = (): [method: string, path: string, body?: unknown] => {
  switch (`${group} ${action ?? ""}`.trim()) {
    case "workspace create":
      return ["POST", "/workspaces", { name: a ?? fail(usage), ...(values.billing ? { billing: json(values.billing, "billing") } : {}) }]
    case "workspace get":
      return ["GET", `/workspaces/${enc(a ?? fail(usage))}`]
    case "workspace update":
      return ["PATCH", `/workspaces/${enc(a ?? fail(usage))}`, {
        ...(values.name ? { name: values.name } : {}),
        ...(values.billing ? { billing: json(values.billing, "billing") } : {})
      }]
    case "key create":
      return ["POST", `/workspaces/${enc(a ?? fail(usage))}/keys`, {
        kind: values.kind ?? fail("--kind live|test is required"),
        ...(values.scopes ? { scopes: values.scopes.split(",").map((s) => s.trim()) } : {}),
        ...(values.name ? { name: values.name } : {})
      }]
    case "key revoke":
      return ["DELETE", `/keys/${enc(a ?? fail(usage))}`]
    case "number add":
      return ["POST", `/workspaces/${enc(a ?? fail(usage))}/numbers`, { e164: b ?? fail(usage), ...(values.type ? { type: values.type } : {}) }]
    default:
      if (group !== undefined && ["ledger", "audit-log", "mail"].includes(group) && action !== undefined) {
        return ["GET", `/workspaces/${enc(action)}/${group}`]
      }
      return fail(usage)
  }
}

if (values.help || group === undefined) {
  console.log(usage)
  process.exit(0)
}

const token = process.env.ADMIN_TOKEN ?? fail("Set ADMIN_TOKEN to the server's admin token")
const base = process.env.SWITCHBOARD_URL ?? `http://localhost:${process.env.PORT ?? 8080}`
const [method, path, body] = route()
const res = await fetch(`${base}/v1/admin${path}`, {
  method,
  headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
  ...(body === undefined ? {} : { body: JSON.stringify(body) })
}).catch((e: unknown) => fail(`Cannot reach ${base}: ${String(e)}`))
const text = await res.text()
let out: unknown = text
try {
  out = JSON.parse(text)
} catch {}
if (!res.ok) fail(JSON.stringify(out, null, 2))
console.log(JSON.stringify(out, null, 2))
