/**
 * `npm run admin -- <command>`: the operator CLI over the admin API (CONTRACT.md).
 * The typed client (`switchboard/client`, adapters/http/client.ts), so its routes and bodies are the
 * server's; arguments are checked against the same schemas before anything is sent.
 * Reads SWITCHBOARD_URL (default http://localhost:$PORT, or :8080: the rule the first-boot message's
 * commands follow) and ADMIN_TOKEN from the environment.
 * Prints the JSON answer; exits 1 with the error envelope on failure.
 * `db dump|load` work on the embedded database's files instead (apps/cli/db.ts), with the server stopped.
 * `npm run admin` runs the bundle (dist/cli.mjs) through apps/cli/admin.mjs, which builds it when a source changed.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Data, Effect, ParseResult, Schema } from "effect"
import { parseArgs } from "node:util"
import { type Client, makeClient, type ServerError } from "../../adapters/http/client.ts"
import type { DataDirLocked } from "../../adapters/pglite/dataDirLock.ts"
import { CardSetupInput } from "../../core/billing/hosted.ts"
import { invalidInput } from "../../core/kernel/decodeMessage.ts"
import { errorStatus } from "../../core/kernel/errors.ts"
import { CreateMemberInput, UpdateMemberInput } from "../../core/members/model.ts"
import { AddNumberInput, CreateWorkspaceInput, UpdateWorkspaceInput } from "../../core/workspaces/inputs.ts"
import { CreateKeyInput } from "../../core/workspaces/keys.ts"
import type * as Db from "./db.ts"

const usage = `Usage: npm run admin -- <command> [options]

  workspace list
  workspace create <name> [--billing '<json>']
  workspace get <workspaceId>
  workspace update <workspaceId> [--name <name>] [--billing '<json>']
  key list <workspaceId>             (never a token or its hash)
  key get <keyId>
  key create <workspaceId> --kind live|test [--scopes a,b,...] [--name <name>]
  key revoke <keyId>
  member list <workspaceId>
  member add <workspaceId> <email> --name <name> --role owner|admin|member [--phone <phone>]
  member update <memberId> [--email <email>] [--name <name>] [--role <role>] [--phone <phone>|none]
  member remove <memberId>           (never the workspace's last owner)
  number list <workspaceId>
  number add <workspaceId> <e164> [--type local|toll_free]
  number remove <workspaceId> <e164>  (a seeded number)
  payment-method setup <workspaceId> [--success-url <url>] [--cancel-url <url>]
                                     (PAYMENTS=stripe: the card setup page's URL)
  ledger <workspaceId>
  invoice list <workspaceId>
  invoice pay <workspaceId> <invoiceId>   (charge a failed invoice again)
  audit-log <workspaceId>
  mail <workspaceId>

Environment: ADMIN_TOKEN (required), SWITCHBOARD_URL (the server; default http://localhost:$PORT, or :8080)

The embedded database (no DATABASE_URL), with the server stopped; DATA_DIR as the server's (default ./.data):
  db dump <file>   PGlite's data directory as a gzipped tarball (keep DATA_DIR/secrets.key with it)
  db load <file>   into a DATA_DIR without a database`

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    billing: { type: "string" },
    name: { type: "string" },
    kind: { type: "string" },
    scopes: { type: "string" },
    type: { type: "string" },
    email: { type: "string" },
    role: { type: "string" },
    phone: { type: "string" },
    "success-url": { type: "string" },
    "cancel-url": { type: "string" },
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

const [group, action, a, b] = positionals

class ArgumentsRefused extends Data.TaggedError("ArgumentsRefused")<{ readonly error: ParseResult.ParseError }> {}

if (values.help || group === undefined) {
  console.log(usage)
  process.exit(0)
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2)

/** The server's error as its envelope. */
const envelope = (e: ServerError) =>
  pretty({ error: { code: errorStatus[e._tag].code, message: e.message, requestId: e.requestId } })

const token = () => process.env.ADMIN_TOKEN ?? fail("Set ADMIN_TOKEN to the server's admin token")
const baseUrl = process.env.SWITCHBOARD_URL ?? `http://localhost:${process.env.PORT ?? 8080}`

type Admin = Client["admin"]

/** The command line as one admin call. */
const command = (admin: Admin) => {
  const need = (arg: string | undefined) => arg ?? fail(usage)
  // The client pastes path parameters in as they are: an id with `/`, `?` or `#` must not reach another route.
  const id = (arg: string | undefined) => encodeURIComponent(need(arg))
  /** The arguments decoded with the admin API's own schema; a refusal is reported without a request. */
  const args = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
    Effect.mapError(Schema.decodeUnknown(schema)(input), (e) => new ArgumentsRefused({ error: e }))
  switch (group) {
    case "ledger":
      return admin.ledger({ path: { id: id(action) } })
    case "audit-log":
      return admin.auditLog({ path: { id: id(action) } })
    case "mail":
      return admin.mail({ path: { id: id(action) } })
  }
  switch (`${group} ${action ?? ""}`.trim()) {
    case "workspace list":
      return admin.listWorkspaces()
    case "invoice list":
      return admin.invoices({ path: { id: id(a) } })
    case "invoice pay":
      return admin.payInvoice({ path: { id: id(a), invoiceId: id(b) } })
    case "workspace create":
      return Effect.flatMap(
        args(CreateWorkspaceInput, {
          name: need(a),
          ...(values.billing ? { billing: json(values.billing, "billing") } : {})
        }),
        (payload) => admin.createWorkspace({ payload })
      )
    case "workspace get":
      return admin.getWorkspace({ path: { id: id(a) } })
    case "workspace update":
      return Effect.flatMap(
        args(UpdateWorkspaceInput, {
          ...(values.name ? { name: values.name } : {}),
          ...(values.billing ? { billing: json(values.billing, "billing") } : {})
        }),
        (payload) => admin.updateWorkspace({ path: { id: id(a) }, payload })
      )
    case "key create":
      return Effect.flatMap(
        args(CreateKeyInput, {
          kind: values.kind ?? fail("--kind live|test is required"),
          ...(values.scopes ? { scopes: values.scopes.split(",").map((s) => s.trim()) } : {}),
          ...(values.name ? { name: values.name } : {})
        }),
        (payload) => admin.createKey({ path: { id: id(a) }, payload })
      )
    case "key list":
      return admin.listKeys({ path: { id: id(a) } })
    case "key get":
      return admin.getKey({ path: { keyId: id(a) } })
    case "key revoke":
      return admin.revokeKey({ path: { keyId: id(a) } })
    case "member list":
      return admin.listMembers({ path: { id: id(a) } })
    case "member add":
      return Effect.flatMap(
        args(CreateMemberInput, {
          email: need(b),
          name: values.name ?? fail("--name is required"),
          role: values.role ?? fail("--role owner|admin|member is required"),
          ...(values.phone ? { phone: values.phone } : {})
        }),
        (payload) => admin.createMember({ path: { id: id(a) }, payload })
      )
    case "member update":
      return Effect.flatMap(
        args(UpdateMemberInput, {
          ...(values.email ? { email: values.email } : {}),
          ...(values.name ? { name: values.name } : {}),
          ...(values.role ? { role: values.role } : {}),
          // `--phone none` clears it.
          ...(values.phone ? { phone: values.phone === "none" ? null : values.phone } : {})
        }),
        (payload) => admin.updateMember({ path: { memberId: id(a) }, payload })
      )
    case "member remove":
      return admin.removeMember({ path: { memberId: id(a) } })
    case "number list":
      return admin.listNumbers({ path: { id: id(a) } })
    case "number remove":
      return admin.removeNumber({ path: { id: id(a), e164: id(b) } })
    case "number add":
      return Effect.flatMap(
        args(AddNumberInput, { e164: need(b), ...(values.type ? { type: values.type } : {}) }),
        (payload) => admin.addNumber({ path: { id: id(a) }, payload })
      )
    case "payment-method setup":
      return Effect.flatMap(
        args(CardSetupInput, {
          ...(values["success-url"] ? { successUrl: values["success-url"] } : {}),
          ...(values["cancel-url"] ? { cancelUrl: values["cancel-url"] } : {})
        }),
        (payload) => admin.setupPaymentMethod({ path: { id: id(a) }, payload })
      )
    default:
      return fail(usage)
  }
}

/** The innermost cause's code or message: fetch says only "fetch failed", its cause says ECONNREFUSED. */
const reason = (cause: unknown): string =>
  cause instanceof Error && cause.cause !== undefined
    ? reason(cause.cause)
    : String(
      (cause as { readonly code?: unknown } | undefined)?.code ?? (cause instanceof Error ? cause.message : cause)
    )

const unreachable = (cause: unknown) =>
  [
    `Cannot reach the Switchboard server at ${baseUrl} (${reason(cause)}).`,
    "Start it (npm start), or point the CLI at it:",
    "  SWITCHBOARD_URL=https://switchboard.example.com npm run admin -- ...   (any URL)",
    "  PORT=<port> npm run admin -- ...                                       (http://localhost:<port>, the server's PORT)"
  ].join("\n")

const program = Effect.gen(function*() {
  const client = yield* makeClient({ baseUrl, adminToken: token() })
  const answer = yield* command(client.admin)
  console.log(pretty(answer))
}).pipe(
  Effect.catchTags({
    // The server's answer, as its envelope.
    InvalidArgument: (e) => Effect.succeed(envelope(e)),
    Unauthenticated: (e) => Effect.succeed(envelope(e)),
    PermissionDenied: (e) => Effect.succeed(envelope(e)),
    NotFound: (e) => Effect.succeed(envelope(e)),
    FailedPrecondition: (e) => Effect.succeed(envelope(e)),
    ResourceExhausted: (e) => Effect.succeed(envelope(e)),
    Internal: (e) => Effect.succeed(envelope(e)),
    // A non-2xx answer that is not the envelope (a proxy's page, 503 while the database is away): as sent.
    ResponseError: (e) => Effect.succeed(`${e.response.status} from ${baseUrl}: ${e.description ?? e.message}`),
    RequestError: (e) => Effect.succeed(unreachable(e.cause ?? e.description)),
    // An argument the admin API would refuse, caught before sending: the envelope's code and message.
    ArgumentsRefused: ({ error }) =>
      Effect.succeed(pretty({ error: { code: "invalid_argument", message: invalidInput(error).message } })),
    // A 2xx answer the client's schema does not read: a server of another version.
    ParseError: (e) => Effect.succeed(`Unexpected answer from ${baseUrl}: ${e.message}`)
  }),
  Effect.flatMap((error) =>
    error === undefined
      ? Effect.void
      : Effect.sync(() => {
        console.error(error)
        process.exitCode = 1
      })
  ),
  Effect.provide(NodeHttpClient.layer)
)

/** `db dump|load`: one JSON line of what was done, or the refusal (a server holding DATA_DIR, a non-empty target) as one line, exit 1. */
const dbProgram = Effect.promise(() => import("./db.ts")).pipe(
  // Loaded only for `db`: PGlite is no part of the other commands' start-up.
  Effect.flatMap((db): Effect.Effect<object, Db.DbCommandRefused | DataDirLocked> => {
    const dataDir = process.env.DATA_DIR ?? "./.data"
    const file = a ?? fail(usage)
    return action === "dump" ? db.dump(dataDir, file) : action === "load" ? db.load(dataDir, file) : fail(usage)
  }),
  Effect.match({
    onSuccess: (done) => console.log(JSON.stringify(done, null, 2)),
    onFailure: (refused) => {
      console.error(refused.message)
      process.exitCode = 1
    }
  })
)

Effect.runPromise(group === "db" ? dbProgram : program)
