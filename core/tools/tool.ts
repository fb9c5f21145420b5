/**
 * A capability any transport can offer: the REST handlers, the MCP endpoint (one tool per entry)
 * and the AI agent call the same entries. `input` is the Schema the REST payload uses, `run` the
 * same core use case as the REST route, and its answer the same JSON body the route answers.
 */
import { type Effect, Effect as E, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import type { Scope } from "../auth/scopes.ts"
import { invalidInput } from "../decodeMessage.ts"
import { type DomainError, InvalidArgument } from "../errors.ts"
import { jsonProblem } from "../input.ts"

export interface Tool<I, IE, A, E extends DomainError, R> {
  /** Unique, `[a-z_]`, as MCP lists it. */
  readonly name: string
  readonly description: string
  /** Decodes what a caller sends (JSON). */
  readonly input: Schema.Schema<I, IE>
  /** A valid input, as a caller would send it. */
  readonly example: NoInfer<IE>
  /** The scope the use case requires; a transport may hide tools a key cannot use. */
  readonly scope: Scope
  readonly run: (principal: Principal, input: I) => Effect.Effect<A, E, R>
}

// The table's entries have different inputs, answers and services.
export type AnyTool = Tool<any, any, unknown, DomainError, any>

export const tool = <I, IE, A, E extends DomainError, R>(t: Tool<I, IE, A, E, R>): Tool<I, IE, A, E, R> => t

/** Checks a caller's raw input against the bounds of core/input.ts, decodes it with the tool's Schema, then runs it. */
export const callTool = <I, IE, A, E extends DomainError, R>(t: Tool<I, IE, A, E, R>, principal: Principal, raw: unknown): Effect.Effect<A, E | InvalidArgument, R> => {
  const problem = jsonProblem(raw)
  if (problem !== undefined) return E.fail(new InvalidArgument({ message: problem }))
  return Schema.decodeUnknown(t.input, { errors: "all" })(raw).pipe(
    E.mapError(invalidInput),
    E.flatMap((input) => t.run(principal, input))
  )
}

/** A tool that takes nothing. An empty struct alone reads as "any object or array" in JSON Schema; MCP wants an object. */
export const NoInput = Schema.Struct({}).annotations({
  parseOptions: { onExcessProperty: "error" },
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})

/** The `{ id }` of the record a tool acts on. */
export const ById = Schema.Struct({ id: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } })


/** An update: the record's id and the same changes the REST PATCH body carries. */
export const Changes = <S extends Schema.Schema.Any>(changes: S) =>
  Schema.Struct({ id: Schema.String, changes }).annotations({ parseOptions: { onExcessProperty: "error" } })
