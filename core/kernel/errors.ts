/**
 * The seven error kinds of SPEC "Errors". Every expected failure in the core is one of these.
 * `errorStatus` is the only place their HTTP status and public code are written: adapters/http reads
 * it for the `{error: {code, message, requestId}}` envelope, the HttpApi error schemas
 * (adapters/http/api/errors.ts) and the OpenAPI document.
 */
import { Schema } from "effect"

export class InvalidArgument extends Schema.TaggedError<InvalidArgument>()("InvalidArgument", {
  message: Schema.String
}) {}

export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {}

export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  message: Schema.String
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {}

export class FailedPrecondition extends Schema.TaggedError<FailedPrecondition>()("FailedPrecondition", {
  message: Schema.String
}) {}

export class ResourceExhausted extends Schema.TaggedError<ResourceExhausted>()("ResourceExhausted", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  message: Schema.String
}) {}

export type DomainError =
  | InvalidArgument
  | Unauthenticated
  | PermissionDenied
  | NotFound
  | FailedPrecondition
  | ResourceExhausted
  | Internal

export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "failed_precondition"
  | "resource_exhausted"
  | "internal"
  /** Not a domain error: the HTTP adapter's answer while the database is away (adapters/sql/unavailable.ts). */
  | "unavailable"

/** The one table that maps an error kind to its HTTP status and public code. */
export const errorStatus: Record<DomainError["_tag"], { readonly status: number; readonly code: ErrorCode }> = {
  InvalidArgument: { status: 400, code: "invalid_argument" },
  Unauthenticated: { status: 401, code: "unauthenticated" },
  PermissionDenied: { status: 403, code: "permission_denied" },
  NotFound: { status: 404, code: "not_found" },
  FailedPrecondition: { status: 409, code: "failed_precondition" },
  ResourceExhausted: { status: 429, code: "resource_exhausted" },
  Internal: { status: 500, code: "internal" }
}

export const isDomainError = (u: unknown): u is DomainError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(errorStatus, u._tag)
