/** What several groups share: the public API's common shape, and path, query and header parameters. */
import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authorization } from "../security.ts"
import { InvalidArgument, PermissionDenied } from "./errors.ts"

/**
 * A group of the public API, applied once its endpoints are added: under `/v1/api`, behind an API
 * key, and answering 400 and 403 on every route.
 */
export const publicGroup = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
) => group.addError(InvalidArgument).addError(PermissionDenied).middleware(Authorization).prefix("/v1/api")

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
