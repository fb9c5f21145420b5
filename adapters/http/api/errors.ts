/**
 * The core error kinds with their HTTP status attached, read from the one table in core/kernel/errors.ts.
 * Groups declare `.addError(NotFound)`: the status comes with the schema, so it is written nowhere
 * else. (The envelope a client receives is built by platform.ts from the same table.)
 */
import { HttpApiSchema } from "@effect/platform"
import type { Schema } from "effect"
import * as Errors from "../../../core/kernel/errors.ts"

const withStatus = <A, I, R>(
  error: Schema.Schema<A, I, R> & { readonly _tag: Errors.DomainError["_tag"] }
): Schema.Schema<A, I, R> =>
  error.annotations(HttpApiSchema.annotations({ status: Errors.errorStatus[error._tag].status }))

export const InvalidArgument = withStatus(Errors.InvalidArgument)
export const Unauthenticated = withStatus(Errors.Unauthenticated)
export const PermissionDenied = withStatus(Errors.PermissionDenied)
export const NotFound = withStatus(Errors.NotFound)
export const FailedPrecondition = withStatus(Errors.FailedPrecondition)
export const ResourceExhausted = withStatus(Errors.ResourceExhausted)
export const Internal = withStatus(Errors.Internal)
