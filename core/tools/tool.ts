/**
 * A capability, written once: the REST route (its handler, summary, errors, scope and idempotency,
 * adapters/http/capabilities.ts), the MCP tool and the AI agent are all derived from its entry.
 * `input` is the REST route's path, query and body parameters as one flat object, `run` the core
 * use case, and `output` the Schema of the JSON body the route answers.
 *
 * The entry is where its scope is enforced: `tool` makes `run` check it first, so the core use
 * cases behind it take an authorized principal and check nothing themselves.
 */
import { type Effect, Effect as E, Schema } from "effect"
import { type Principal, requireScope } from "../auth/principal.ts"
import type { Scope } from "../auth/scopes.ts"
import { invalidInput } from "../kernel/decodeMessage.ts"
import {
  type DomainError,
  type FailedPrecondition,
  type Internal,
  InvalidArgument,
  type NotFound,
  type PermissionDenied,
  type ResourceExhausted
} from "../kernel/errors.ts"
import { jsonProblem } from "../kernel/input.ts"

/**
 * MCP's tool annotations, stated for every tool. `destructive`: the call deletes or overwrites
 * something (a delete, an update that replaces fields, publishing, re-routing live calls, rotating a
 * secret); `idempotent`: repeating it with the same arguments changes nothing more; `openWorld`: it
 * reaches a party outside the workspace (a carrier, the registry, a webhook receiver).
 */
export interface ToolHints {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/** The error kinds a tool may declare; every tool may also answer InvalidArgument (its input) and PermissionDenied (its scope). */
export type ToolError = typeof NotFound | typeof FailedPrecondition | typeof ResourceExhausted | typeof Internal

export interface Tool<I, IE, A, E extends DomainError, R> {
  /** Unique, `<resource>_<action>` in snake_case (CONTRACT), as MCP lists it. */
  readonly name: string
  /** A short human title, as an MCP client shows it. */
  readonly title: string
  /** Written for a model: what it does, when to use it, its rules and scope. */
  readonly description: string
  /** Decodes what a caller sends (JSON): the REST parameter names, flat. */
  readonly input: Schema.Schema<I, IE>
  /** The answer: the REST route's success body, and MCP's `outputSchema` and `structuredContent`. */
  readonly output: Schema.Schema<A, any>
  /** A valid input, as a caller would send it. */
  readonly example: NoInfer<IE>
  /** The scope the use case requires; a transport may hide tools a key cannot use. */
  readonly scope: Scope
  readonly hints: ToolHints
  /** REST accepts an `Idempotency-Key` for this capability (send, place call, buy number); MCP exposes it as an optional `idempotencyKey` argument. */
  readonly idempotencyKey: boolean
  /** The expected failures beyond bad input and a missing scope: REST documents them as the route's error responses. */
  readonly errors: ReadonlyArray<ToolError>
  readonly run: (principal: Principal, input: I) => Effect.Effect<A, E, R>
}

// The table's entries have different inputs, answers and services.
export type AnyTool = Tool<any, any, any, DomainError, any>

/** The tools by name, as a transport looks them up. */
export const toolIndex = (table: ReadonlyArray<AnyTool>): ReadonlyMap<string, AnyTool> =>
  new Map(table.map((t) => [t.name, t]))

/** An entry of the table; its `run` checks the principal's scope before the use case runs. */
export const tool = <I, IE, A, E extends DomainError, R>(
  t: Tool<I, IE, A, E, R>
): Tool<I, IE, A, E | PermissionDenied, R> => ({
  ...t,
  run: (principal, input) => E.zipRight(requireScope(principal, t.scope), t.run(principal, input))
})

/** Checks a caller's raw input against the bounds of core/kernel/input.ts, then decodes it with the tool's Schema. */
export const decodeInput = <I, IE, A, E extends DomainError, R>(
  t: Tool<I, IE, A, E, R>,
  raw: unknown
): Effect.Effect<I, InvalidArgument> => {
  const problem = jsonProblem(raw)
  if (problem !== undefined) return E.fail(new InvalidArgument({ message: problem }))
  return Schema.decodeUnknown(t.input, { errors: "all" })(raw).pipe(E.mapError(invalidInput))
}

/** Checks the scope (so a key without it learns nothing of the input's rules), decodes a caller's raw input (`decodeInput`), then runs the tool. */
export const callTool = <I, IE, A, E extends DomainError, R>(
  t: Tool<I, IE, A, E, R>,
  principal: Principal,
  raw: unknown
): Effect.Effect<A, E | InvalidArgument | PermissionDenied, R> =>
  requireScope(principal, t.scope).pipe(E.zipRight(decodeInput(t, raw)), E.flatMap((input) => t.run(principal, input)))

/** A tool that takes nothing. An empty struct alone reads as "any object or array" in JSON Schema; MCP wants an object. */
export const NoInput = Schema.Struct({}).annotations({
  parseOptions: { onExcessProperty: "error" },
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** The `{ id }` of the record a tool acts on (the REST path's `:id`). */
export const ById = Schema.Struct({ id: Schema.String }).annotations(strict)

/** A route on one record: its `id` beside the body's (or query's) fields, flat, as REST names them. */
export const WithId = <F extends Schema.Struct.Fields>(params: Schema.Struct<F>) =>
  Schema.Struct({ ...ById.fields, ...params.fields }).annotations(strict)

/** What a delete answers. */
export const Deleted = Schema.Struct({ deleted: Schema.Literal(true) })

/** The hints of a read. */
export const read: ToolHints = { readOnly: true, destructive: false, idempotent: true, openWorld: false }
