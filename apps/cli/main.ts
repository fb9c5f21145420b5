/**
 * `npm run admin -- <command>`: the operator CLI over the admin API (CONTRACT.md).
 * A typed client derived from the server's own HttpApi definition (HttpApiClient), so its routes and
 * bodies are the server's; arguments are checked against the same schemas before anything is sent.
 * Reads SWITCHBOARD_URL (default http://localhost:$PORT or :8080) and ADMIN_TOKEN from the environment.
 * Prints the JSON answer; exits 1 with the error envelope on failure.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Data, Effect, ParseResult, Schema } from "effect"
import { parseArgs } from "node:util"
import { Api } from "../../adapters/http/api.ts"
import { invalidInput } from "../../core/decodeMessage.ts"
import { AddNumberInput, CreateWorkspaceInput, UpdateWorkspaceInput } from "../../core/workspaces/inputs.ts"
import { CreateKeyInput } from "../../core/workspaces/keys.ts"

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

const [group, action, a, b] = positionals

class ArgumentsRefused extends Data.TaggedError("ArgumentsRefused")<{ readonly error: ParseResult.ParseError }> {}

if (values.help || group === undefined) {
  console.log(usage)
  process.exit(0)
}

const token = process.env.ADMIN_TOKEN ?? fail("Set ADMIN_TOKEN to the server's admin token")
const baseUrl = process.env.SWITCHBOARD_URL ?? `http://localhost:${process.env.PORT ?? 8080}`

/** Non-2xx answers stay responses (the error envelope is printed as sent), not decoded errors. */
const makeClient = HttpApiClient.make(Api, {
  baseUrl,
  transformClient: (client) => client.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(token)), HttpClient.filterStatusOk)
})
type Admin = Effect.Effect.Success<typeof makeClient>["admin"]

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
    case "workspace create":
      return Effect.flatMap(
        args(CreateWorkspaceInput, { name: need(a), ...(values.billing ? { billing: json(values.billing, "billing") } : {}) }),
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
    case "key revoke":
      return admin.revokeKey({ path: { keyId: id(a) } })
    case "number add":
      return Effect.flatMap(
        args(AddNumberInput, { e164: need(b), ...(values.type ? { type: values.type } : {}) }),
        (payload) => admin.addNumber({ path: { id: id(a) }, payload })
      )
    default:
      return fail(usage)
  }
}

const program = Effect.gen(function* () {
  const client = yield* makeClient
  const answer = yield* command(client.admin)
  console.log(JSON.stringify(answer, null, 2))
}).pipe(
  Effect.catchTags({
    // A non-2xx answer: its body (the error envelope) as sent.
    ResponseError: (e) =>
      Effect.map(e.response.text, (text) => {
        try {
          return JSON.stringify(JSON.parse(text), null, 2)
        } catch {
          return text
        }
      }),
    RequestError: (e) => Effect.succeed(`Cannot reach ${baseUrl}: ${e.cause ?? e.description ?? e.message}`),
    // An argument the admin API would refuse, caught before sending: the envelope's code and message.
    ArgumentsRefused: ({ error }) =>
      Effect.succeed(
        JSON.stringify({ error: { code: "invalid_argument", message: invalidInput(error).message } }, null, 2)
      ),
    // A 2xx answer the client's schema does not read: a server of another version.
    ParseError: (e) => Effect.succeed(`Unexpected answer from ${baseUrl}: ${e.message}`)
  }),
  // The admin API's typed errors never arrive: every non-2xx stays a ResponseError (filterStatusOk).
  Effect.orDie,
  Effect.flatMap((error) =>
    error === undefined
      ? Effect.void
      : Effect.sync(() => {
          console.error(error)
          process.exitCode = 1
        })
  ),
  Effect.provide(FetchHttpClient.layer)
)

Effect.runPromise(program)
