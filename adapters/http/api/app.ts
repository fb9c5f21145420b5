/**
 * CONTRACT "Members and the console": the console's JSON API under `/v1/app`, behind the session
 * cookie, and the sign-in link's landing route. Served by handlers/app.ts; the console's pages by
 * the same process at `/app`. Sessions are never accepted on `/v1/api` or `/v1/mcp`, and keys never here.
 */
import {
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import { Schema } from "effect"
import { Member, Role } from "../../../core/members/model.ts"
import { BoundedBody } from "../security.ts"
import {
  FailedPrecondition,
  InvalidArgument,
  NotFound,
  PermissionDenied,
  ResourceExhausted,
  Unauthenticated
} from "./errors.ts"

export const SESSION_COOKIE = "sb_session"

/**
 * A console session: the `sb_session` cookie. State-changing requests must also carry the console's
 * own `Origin` (PUBLIC_BASE_URL's), else 403: with SameSite=Lax that stops cross-site request forgery.
 */
export class MemberSession extends HttpApiMiddleware.Tag<MemberSession>()("MemberSession", {
  failure: Schema.Union(Unauthenticated, PermissionDenied),
  security: { session: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }) }
}) {}

/** The console's origin, checked on a state-changing request that has no session yet (sign-in). */
export class ConsoleOriginCheck extends HttpApiMiddleware.Tag<ConsoleOriginCheck>()("ConsoleOriginCheck", {
  failure: PermissionDenied
}) {}

const WorkspaceRef = Schema.Struct({ id: Schema.UUID, name: Schema.String })

export const Me = Schema.Struct({
  member: Member,
  workspace: WorkspaceRef,
  workspaces: Schema.Array(Schema.Struct({ ...WorkspaceRef.fields, role: Role }))
}).annotations({ identifier: "ConsoleMe" })

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object" }
})

const ToolEntry = Schema.Struct({
  name: Schema.String,
  title: Schema.String,
  description: Schema.String,
  scope: Schema.String,
  readOnly: Schema.Boolean,
  destructive: Schema.Boolean,
  inputSchema: JsonObject.annotations({ description: "The JSON Schema of the capability's input" })
})

const Html = HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/html" })

export class AppGroup extends HttpApiGroup.make("app")
  .add(
    HttpApiEndpoint.post("signIn", "/v1/app/sign-in")
      .setPayload(Schema.Struct({ email: Schema.String.pipe(Schema.maxLength(320)) }))
      .addSuccess(Schema.Struct({ sent: Schema.Literal(true) }), { status: 202 })
      .addError(InvalidArgument)
      .addError(PermissionDenied)
      .addError(ResourceExhausted)
      .middleware(BoundedBody)
      .middleware(ConsoleOriginCheck)
      .annotate(
        OpenApi.Description,
        "Mails a sign-in link to `email` when it is a member's. Answers 202 whatever the email, so nobody learns who is a member; at most 3 links an email per 15 minutes are mailed, and requests are limited per address."
      )
  )
  .add(
    // The mailed link (valid 15 minutes, once): sets `sb_session` (HttpOnly, SameSite=Lax, Path=/,
    // Secure over https) and answers 303 to `/app`; a used, expired or malformed link answers a page
    // saying so. A page for browsers, left out of the document as the console's pages are.
    HttpApiEndpoint.get("redeemLink", "/app/sign-in/:token")
      .setPath(Schema.Struct({ token: Schema.String }))
      .addSuccess(HttpApiSchema.Empty(303))
      .addError(Html, { status: 400 })
      .addError(NotFound)
      .annotate(OpenApi.Exclude, true)
  )
  .add(
    HttpApiEndpoint.get("me", "/v1/app/me")
      .addSuccess(Me)
      .middleware(MemberSession)
      .annotate(
        OpenApi.Description,
        "Who is signed in, the workspace the session acts in, and every membership of the email."
      )
  )
  .add(
    HttpApiEndpoint.post("switchWorkspace", "/v1/app/workspace")
      .setPayload(Schema.Struct({ workspaceId: Schema.String }))
      .addSuccess(Me)
      .addError(NotFound)
      .addError(InvalidArgument)
      .middleware(BoundedBody)
      .middleware(MemberSession)
      .annotate(OpenApi.Description, "Acts in another workspace the email is a member of.")
  )
  .add(
    HttpApiEndpoint.post("signOut", "/v1/app/sign-out")
      .addSuccess(Schema.Struct({ signedOut: Schema.Literal(true) }))
      .middleware(MemberSession)
      .annotate(OpenApi.Description, "Ends the session and clears its cookie.")
  )
  .add(
    HttpApiEndpoint.get("listTools", "/v1/app/tools")
      .addSuccess(Schema.Struct({ tools: Schema.Array(ToolEntry) }))
      .middleware(MemberSession)
      .annotate(
        OpenApi.Description,
        "The capabilities the member's role may call: the table REST and MCP serve, and the console's own (notes, assignment, members, API keys)."
      )
  )
  .add(
    HttpApiEndpoint.post("callTool", "/v1/app/tools/:name")
      .setPath(
        Schema.Struct({
          name: Schema.String.annotations({ description: "The capability's name, from GET /v1/app/tools" })
        })
      )
      .setPayload(JsonObject)
      .addSuccess(JsonObject)
      .addError(InvalidArgument)
      .addError(PermissionDenied)
      .addError(NotFound)
      .addError(FailedPrecondition)
      .addError(ResourceExhausted)
      .middleware(BoundedBody)
      .middleware(MemberSession)
      .annotate(
        OpenApi.Description,
        "Runs one capability with the member as the actor: the body is its input (as MCP takes it), the answer what its REST route answers. A role that may not call it: 403."
      )
  )
  .add(
    HttpApiEndpoint.get("events", "/v1/app/events")
      .addSuccess(
        HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/event-stream" }).annotations({
          description:
            "Server-sent events: each of the workspace's events as it is stored (`event: <type>`, `data: {id, type, createdAt, data}`)."
        })
      )
      .addError(ResourceExhausted)
      .middleware(MemberSession)
      .annotate(OpenApi.Description, "The workspace's events as they happen, for the console to refresh what it shows.")
  )
  .annotate(OpenApi.Title, "Console")
  .annotate(
    OpenApi.Description,
    "The web console's own API: sign-in by email link and a session cookie. Not for API keys."
  )
{}
