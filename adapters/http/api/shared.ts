/** What several groups share: the public API's common shape, and path, query and header parameters. */
import { type HttpApiEndpoint, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Context, Option, Schema } from "effect"
import type { Scope } from "../../../core/auth/scopes.ts"
import { MAX_KEY_LENGTH } from "../../../core/idempotency/runner.ts"
import { E164 } from "../../../core/kernel/phone.ts"
import type { AnyTool, ToolError } from "../../../core/tools/tool.ts"
import { Authorization, BoundedBody, RequiredScopes } from "../security.ts"
import * as HttpErrors from "./errors.ts"

/**
 * A group of the public API, applied once its endpoints are added: under `/v1/api`, behind an API
 * key, and answering 400 and 403 on every route.
 */
export const publicGroup = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
) =>
  group.addError(HttpErrors.InvalidArgument).addError(HttpErrors.PermissionDenied).middleware(BoundedBody).middleware(
    Authorization
  ).prefix("/v1/api")

/** The name of the tool (core/tools) an endpoint offers; shown as `x-mcp-tool` on its operation. */
export class Capability extends Context.Tag("switchboard/Capability")<Capability, string>() {}

/** Refuses a parameter the schema does not declare (`400 name: unknown field`), as a body refuses an unknown field. */
const strictParams = { parseOptions: { onExcessProperty: "error" } } as const

/** The query of a route that takes no query parameters: any is unknown (an empty Struct would take anything). */
const NoQuery = Schema.Record({
  key: Schema.String,
  value: Schema.Never.annotations({ message: () => "unknown field" })
})

/**
 * The scopes a key needs for an endpoint of a public group: checked by the Authorization
 * middleware before the body is read, and listed in the OpenAPI document (the operation's
 * security requirement and its description); with `tool`, the operation also names its tool.
 * Every public endpoint passes here, so here its query is made strict: an unknown (or misspelt)
 * query parameter is a 400 naming it rather than silently ignored.
 */
const scoped = <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(
  endpoint: E,
  scopes: ReadonlyArray<Scope>,
  tool?: string
): E =>
  strictQuery(endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps)
    .annotate(RequiredScopes, scopes)
    .annotate(OpenApi.Transform, (op) => ({
      ...op,
      description: [op.description, `Scope ${scopes.map((s) => `\`${s}\``).join(" and ")}.`].filter(Boolean).join(" "),
      security: (op.security as Array<Record<string, ReadonlyArray<string>>>).map((requirement) =>
        Object.fromEntries(Object.keys(requirement).map((name) => [name, scopes]))
      ),
      ...(tool === undefined ? {} : { "x-mcp-tool": tool })
    })) as unknown as E

const strictQuery = (
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): HttpApiEndpoint.HttpApiEndpoint.AnyWithProps =>
  endpoint.setUrlParams(
    Option.match(endpoint.urlParamsSchema, {
      onNone: () => NoQuery,
      onSome: (query) => query.annotations(strictParams)
    }) as never
  ) as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps

/**
 * An endpoint that offers a tool: everything the tool already says is taken from it, so a route
 * line gives only its method, path, parameters, success body and description. From the tool: the
 * scope, the summary (`title`), the declared errors, and the name
 * (`Capability`) by which the handler is derived (capabilities.ts).
 */
export const capability = (tool: AnyTool) => <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E): E => {
  let made = scoped(endpoint, [tool.scope], tool.name) as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  for (const error of tool.errors) {
    made = made.addError(httpError[error._tag]) as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  }
  // The route line declares the header itself, so its type (and the typed client's) has it; the two cannot disagree.
  if (tool.idempotencyKey !== Option.isSome(made.headersSchema)) {
    throw new Error(
      `Route ${made.name}: ${tool.name} ${
        tool.idempotencyKey ? "takes an Idempotency-Key: add .setHeaders(IdempotencyHeaders)" : "takes no headers"
      }`
    )
  }
  return made.annotate(OpenApi.Summary, tool.title).annotate(Capability, tool.name) as unknown as E
}

/** Each error kind a tool may declare, with its HTTP status (errors.ts). */
const httpError: Record<ToolError["_tag"], Schema.Schema.Any> = {
  NotFound: HttpErrors.NotFound,
  FailedPrecondition: HttpErrors.FailedPrecondition,
  ResourceExhausted: HttpErrors.ResourceExhausted,
  Internal: HttpErrors.Internal
}

/** The scopes of an endpoint that offers no tool (the test helpers). */
export const requires =
  (...scopes: ReadonlyArray<Scope>) => <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E): E =>
    scoped(endpoint, scopes)

export const IdParam = Schema.Struct({ id: Schema.String })

/**
 * `{e164}` in a number route (`/numbers/{e164}/connect`): SPEC sends the `+` as `%2B`, which the
 * router has decoded by now; a bare `+` or a space (a `+` a client failed to encode, or a form
 * decoder turned into a space) is read as the `+` it stood for. Validated as E.164 here, once.
 */
const plusRestored = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (s) => s.replace(/^ /, "+"),
  encode: (s) => s
})

export const E164Param = Schema.Struct({
  e164: Schema.compose(
    plusRestored,
    E164.annotations({ message: () => "must be an E.164 number, such as %2B14155550100" })
  ).annotations({
    jsonSchema: {
      type: "string",
      description: "A workspace number in E.164 form, its `+` sent as `%2B` (e.g. `%2B14155550100`)"
    }
  })
})

/**
 * `{phone}` in an opt-out route (`/opt-outs/{phone}`): any phone, E.164 with its `+` sent as `%2B`
 * or a US number, read as `{e164}` is (a leading space is the `+` it stood for); the use case
 * normalizes it and names it in its 400.
 */
export const PhoneParam = Schema.Struct({
  phone: Schema.compose(plusRestored, Schema.String.pipe(Schema.maxLength(32))).annotations({
    jsonSchema: {
      type: "string",
      maxLength: 32,
      description: "A phone number, E.164 with its `+` sent as `%2B` (e.g. `%2B14155550123`)"
    }
  })
})

/**
 * The success answers of a create that may find the record already there: the tool answers its
 * body with `created`, and the route answers the body alone, 201 when `created`, else 200. Each
 * status is its own success schema; the response encoder picks the one whose `created` matches.
 */
export const createdOrFound = <F extends Schema.Struct.Fields>(body: Schema.Struct<F>) => {
  const answer = (created: boolean) =>
    Schema.transform(body, Schema.Struct({ ...body.fields, created: Schema.Literal(created) }), {
      strict: false,
      decode: (b) => ({ ...b, created }),
      encode: (answer) => {
        const { created: _, ...b } = answer as unknown as { readonly created: boolean }
        return b
      }
    })
  return { created: answer(true), found: answer(false) }
}

/** `?limit=`: an integer from 1 to `max`, named in the 400 message. */
export const limitParam = (max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, max),
    Schema.annotations({
      message: () => `must be an integer from 1 to ${max}`,
      // Documented as the integer it decodes to, not as the query string that carries it.
      jsonSchema: { type: "integer", minimum: 1, maximum: max, description: `Items per page, 1 to ${max}` }
    })
  )

/**
 * `Idempotency-Key` (SPEC "Idempotency"); see idempotency.ts. Declared lower-case, as requests
 * arrive; the document names it as SPEC does (openapi.ts).
 */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String.annotations({
    description:
      `Send the same key (1 to ${MAX_KEY_LENGTH} characters) again to retry safely: within 24 hours a repeated request answers the first one's response with \`Idempotency-Replayed: true\` instead of acting twice`
  }))
})
