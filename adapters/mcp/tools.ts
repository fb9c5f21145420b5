/**
 * The capability table (core/tools) as MCP tools: each entry's JSON Schemas derived from its own
 * Effect Schemas (no hand-written JSON Schema), its annotations from its hints, and a call run
 * through the same use case, gates and idempotency runner as its REST route. Failures are results
 * with `isError` holding REST's error envelope, so a model reads the documented code and message.
 */
import { Effect, JSONSchema, Option, Schema } from "effect"
import type { Principal } from "../../core/auth/principal.ts"
import { runIdempotent, storedError } from "../../core/idempotency/runner.ts"
import { type ErrorCode, errorStatus, isDomainError } from "../../core/kernel/errors.ts"
import { type AnyTool, decodeInput } from "../../core/tools/tool.ts"
import { describeFields, nameTitle } from "../schemaText.ts"

/** The optional argument a tool takes when its REST route takes `Idempotency-Key`. */
export const IDEMPOTENCY_ARGUMENT = "idempotencyKey"

type JsonObject = Record<string, unknown>

/**
 * JSON Schema of a Struct as MCP wants it: an object at the top. `JSONSchema.make` answers a
 * `$ref` when the schema has an identifier; the referenced definition is inlined.
 */
export const objectSchema = (schema: Schema.Schema.All): JsonObject => {
  const { $schema: _, ...made } = JSONSchema.make(schema as Schema.Schema<unknown, unknown>) as unknown as JsonObject
  const ref = typeof made.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(made.$ref)?.[1] : undefined
  if (ref === undefined) return made
  const { [ref]: top, ...defs } = (made.$defs ?? {}) as Record<string, JsonObject>
  return Object.keys(defs).length === 0 ? { ...top } : { ...top, $defs: defs }
}

/** An MCP tool definition (tools/list entry). */
export interface McpToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonObject & { readonly type: "object" }
  readonly outputSchema: JsonObject & { readonly type: "object" }
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
}

const asObject = (name: string, kind: string, json: JsonObject): JsonObject & { readonly type: "object" } => {
  // A programming error in the table, caught when the server starts (and by test/mcp).
  if (json.type !== "object") throw new Error(`Tool ${name}: its ${kind} Schema is not an object`)
  return json as JsonObject & { readonly type: "object" }
}

/** A copy of `json` with Effect's automatic texts removed and the shared fields described (adapters/schemaText.ts). */
const readable = <J extends JsonObject>(json: J): J => {
  const copy = structuredClone(json)
  describeFields(copy)
  return copy
}

export const definitionOf = (t: AnyTool): McpToolDefinition => {
  const input = objectSchema(t.input)
  const properties = (input.properties ?? {}) as JsonObject
  const inputSchema = t.idempotencyKey
    ? {
      ...input,
      properties: {
        ...properties,
        [IDEMPOTENCY_ARGUMENT]: {
          type: "string",
          minLength: 1,
          maxLength: 255,
          description:
            "Send the same key again to retry safely: a repeated call answers the first call's result instead of acting twice (REST's Idempotency-Key)."
        }
      }
    }
    : input
  const readableInput = readable(asObject(t.name, "input", inputSchema))
  // A client shows a field by its title or description: a field with neither is titled by its name.
  for (const [name, property] of Object.entries<Record<string, unknown>>(readableInput.properties as never ?? {})) {
    if (property.title === undefined && property.description === undefined) property.title = nameTitle(name)
  }
  return {
    name: t.name,
    title: t.title,
    // The scope is the entry's own field; a model reads it in the description, as REST's operation states it.
    description: `${t.description} Scope \`${t.scope}\`.`,
    inputSchema: readableInput,
    outputSchema: readable(asObject(t.name, "output", objectSchema(t.output))),
    annotations: {
      title: t.title,
      readOnlyHint: t.hints.readOnly,
      destructiveHint: t.hints.destructive,
      idempotentHint: t.hints.idempotent,
      openWorldHint: t.hints.openWorld
    }
  }
}

/** A tools/call result (MCP 2025-11-25 `CallToolResult`). */
export interface McpToolResult {
  readonly [key: string]: unknown
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: JsonObject
  readonly isError?: boolean
}

const success = (json: unknown): McpToolResult => ({
  content: [{ type: "text", text: JSON.stringify(json) }],
  structuredContent: json as JsonObject
})

/** REST's error envelope as an `isError` result. */
export const failure = (code: ErrorCode, message: string, requestId: string): McpToolResult => ({
  content: [{ type: "text", text: JSON.stringify({ error: { code, message, requestId } }) }],
  isError: true
})

const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Runs one tool for `principal`: the scope first (so a key without it learns nothing else), then
 * the input bounds and the tool's Schema (core/tools `callTool`), then its use case, through the
 * idempotency runner when the caller sent a key. Never fails: every outcome is a result.
 */
export const runTool = (
  t: AnyTool,
  principal: Principal,
  args: unknown,
  requestId: string
): Effect.Effect<McpToolResult, never, any> => {
  if (!principal.scopes.has(t.scope)) {
    return Effect.succeed(failure("permission_denied", `This key lacks the scope ${t.scope}`, requestId))
  }
  let input: unknown = args ?? {}
  let key: string | undefined
  if (t.idempotencyKey && isRecord(input) && IDEMPOTENCY_ARGUMENT in input) {
    const { [IDEMPOTENCY_ARGUMENT]: given, ...rest } = input
    if (typeof given !== "string") {
      return Effect.succeed(failure("invalid_argument", `${IDEMPOTENCY_ARGUMENT}: must be a string`, requestId))
    }
    key = given
    input = rest
  }
  const encode = Schema.encode(t.output as Schema.Schema<unknown, unknown>)
  const fresh = (value: unknown) => Effect.map(encode(value), success)
  const ran = Effect.flatMap(decodeInput(t, input), (decoded) =>
    key === undefined
      ? Effect.flatMap(t.run(principal, decoded), fresh)
      // Hashed and stored as REST stores them (its 201), so one key replays alike on either transport.
      : runIdempotent({
        principal,
        key,
        request: decoded,
        status: 201,
        success: t.output,
        run: t.run(principal, decoded)
      }).pipe(
        Effect.flatMap((answer) => {
          if (answer._tag === "Fresh") return fresh(answer.value)
          if (answer.answer.status >= 400) {
            const { code, message } = storedError(answer.answer)
            return Effect.succeed(failure(code, message, requestId))
          }
          return Effect.succeed(success(JSON.parse(answer.answer.body)))
        })
      ))
  return ran.pipe(
    Effect.catchAll((error) => {
      if (!isDomainError(error)) return Effect.die(error)
      return Effect.succeed(failure(errorStatus[error._tag].code, error.message, requestId))
    }),
    Effect.catchAllCause((cause) =>
      Effect.logError("MCP tool failed", cause).pipe(
        Effect.annotateLogs({ requestId, tool: t.name }),
        Effect.as(failure("internal", `Internal error; quote request id ${requestId}`, requestId))
      )
    )
  )
}

export const findTool = (index: ReadonlyMap<string, AnyTool>, name: string): Option.Option<AnyTool> =>
  Option.fromNullable(index.get(name))
