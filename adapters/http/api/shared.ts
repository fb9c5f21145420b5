/** What several groups share: the public API's common shape, and path, query and header parameters. */
import { type HttpApiEndpoint, type HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { Scope } from "../../../core/auth/scopes.ts"
import { Authorization, BoundedBody, RequiredScopes } from "../security.ts"
import { InvalidArgument, PermissionDenied } from "./errors.ts"

/**
 * A group of the public API, applied once its endpoints are added: under `/v1/api`, behind an API
 * key, and answering 400 and 403 on every route.
 */
export const publicGroup = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
) => group.addError(InvalidArgument).addError(PermissionDenied).middleware(BoundedBody).middleware(Authorization).prefix("/v1/api")

/**
 * The scopes a key needs for an endpoint of a public group: checked by the Authorization
 * middleware before the body is read, and listed in the OpenAPI document (the operation's
 * security requirement and its description).
 */
export const requires =
  (...scopes: ReadonlyArray<Scope>) =>
  <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E): E =>
    (endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps)
      .annotate(RequiredScopes, scopes)
      .annotate(OpenApi.Transform, (op) => ({
        ...op,
        description: [op.description, `Scope ${scopes.map((s) => `\`${s}\``).join(" and ")}.`].filter(Boolean).join(" "),
        security: (op.security as Array<Record<string, ReadonlyArray<string>>>).map((requirement) =>
          Object.fromEntries(Object.keys(requirement).map((name) => [name, scopes]))
        )
      })) as unknown as E

export const IdParam = Schema.Struct({ id: Schema.String })

export const Deleted = Schema.Struct({ deleted: Schema.Literal(true) }).annotations({ examples: [{ deleted: true }] })

/** `?limit=`: an integer from 1 to `max`, named in the 400 message. */
export const limitParam = (max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, max),
    Schema.annotations({ message: () => `must be an integer from 1 to ${max}` })
  )

/** `Idempotency-Key` (SPEC "Idempotency"); see idempotency.ts. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})
