/**
 * The console's API (api/app.ts): sign-in by email link, the session cookie, and one dispatch for
 * every capability, the table REST and MCP serve (core/tools) and the console's own
 * (core/tools/console.ts), run with the member as the actor.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Option, Redacted, Schema, Stream } from "effect"
import type { AuditLog } from "../../../core/audit/store.ts"
import { EventOutbox } from "../../../core/events/outbox.ts"
import { NotFound, PermissionDenied, ResourceExhausted } from "../../../core/kernel/errors.ts"
import type { DomainError } from "../../../core/kernel/errors.ts"
import type { Role } from "../../../core/members/model.ts"
import type { Members } from "../../../core/members/service.ts"
import { ConsoleOrigin, Sessions, type SignedIn } from "../../../core/members/sessions.ts"
import { RateLimiter } from "../../../core/ratelimit/bucket.ts"
import { consoleTools } from "../../../core/tools/console.ts"
import { type AnyTool, callTool, tools, type ToolServices } from "../../../core/tools/index.ts"
import { objectSchema } from "../../mcp/tools.ts"
import { Api } from "../api.ts"
import { ConsoleOriginCheck, MemberSession, SESSION_COOKIE } from "../api/app.ts"
import { TrustedProxies } from "../clientAddress.ts"
import { addressBucket, originOf, requestState } from "../platform.ts"
import { group } from "../router.ts"

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Every capability the console serves, with the least role that may call it. */
const entries: ReadonlyArray<{ readonly tool: AnyTool; readonly role: Role }> = [
  ...tools.map((tool) => ({ tool, role: "member" as Role })),
  ...consoleTools
]
const byName = new Map(entries.map((e) => [e.tool.name, e]))

const mayCall = (who: SignedIn, entry: { readonly tool: AnyTool; readonly role: Role }) =>
  who.principal.scopes.has(entry.tool.scope) && rank[who.member.role] >= rank[entry.role]

/** The signed-in person of a request, set by the MemberSession middleware (the request's own side table, as platform.ts keeps the principal). */
const signedIn = new WeakMap<object, SignedIn>()
const currentMember = Effect.map(HttpServerRequest.HttpServerRequest, (req) => {
  const who = signedIn.get(req.source as object)
  if (who === undefined) throw new Error("currentMember read on a route without the MemberSession middleware")
  return who
})
const sessionToken = Effect.map(HttpServerRequest.HttpServerRequest, (req) => req.cookies[SESSION_COOKIE] ?? "")

const STATE_CHANGING: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"])

/** Refuses a state-changing request whose `Origin` is not the console's own (none counts as another). */
const checkOrigin = (origin: string) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
    if (!STATE_CHANGING.has(req.method) || req.headers["origin"] === origin) return Effect.void
    return Effect.fail(new PermissionDenied({ message: `Console requests must come from ${origin}` }))
  })

export const ConsoleOriginCheckLive = Layer.effect(
  ConsoleOriginCheck,
  Effect.map(ConsoleOrigin, ({ baseUrl }) => checkOrigin(originOf(baseUrl)))
)

export const MemberSessionLive = Layer.effect(
  MemberSession,
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const origin = originOf((yield* ConsoleOrigin).baseUrl)
    return MemberSession.of({
      session: (token) =>
        Effect.gen(function*() {
          yield* checkOrigin(origin)
          const req = yield* HttpServerRequest.HttpServerRequest
          const who = yield* sessions.authenticate(Redacted.value(token))
          signedIn.set(req.source as object, who)
          requestState(req).principal = who.principal
        })
    })
  })
)

const cookie = (value: string, maxAgeSeconds: number, secure: boolean) =>
  `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${
    escapeHtml(title)
  }</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${
    escapeHtml(text)
  }</p><p><a href="/app">Ask for a new link</a></p></main></body></html>`

/** How often a live feed looks for new events, and re-checks that its session still stands. */
const FEED_POLL = Duration.seconds(1)
const FEED_RECHECK_POLLS = 30
/** Open feeds per member in this process; a console needs one, a few tabs a few. */
const FEEDS_PER_MEMBER = 5

export const AppLive = group(
  Api,
  "app",
  (handlers) =>
    Effect.gen(function*() {
      const sessions = yield* Sessions
      const limiter = yield* RateLimiter
      const trusted = yield* TrustedProxies
      const outbox = yield* EventOutbox
      const { baseUrl } = yield* ConsoleOrigin
      const secure = baseUrl.startsWith("https:")
      const feeds = new Map<string, number>()

      const feed = (who: SignedIn, token: string) => {
        const ws = who.principal.workspaceId
        const poll = (
          cursor: number,
          polls: number
        ): Effect.Effect<Option.Option<readonly [string, readonly [number, number]]>> =>
          Effect.gen(function*() {
            yield* Effect.sleep(FEED_POLL)
            if (polls % FEED_RECHECK_POLLS === 0) {
              const still = yield* Effect.either(sessions.authenticate(token))
              if (still._tag === "Left" || still.right.principal.workspaceId !== ws) return Option.none()
            }
            const next = yield* outbox.after(ws, cursor, 100)
            const text = next.events.map((e) =>
              `event: ${e.type}\ndata: ${
                JSON.stringify({ id: e.id, type: e.type, createdAt: e.createdAt, data: e.data })
              }\n\n`
            ).join("")
            // A comment now and then keeps proxies from closing an idle stream.
            const chunk = text.length > 0 ? text : polls % 15 === 0 ? ": keep-alive\n\n" : ""
            return Option.some([chunk, [next.cursor, polls + 1] as const] as const)
          })
        return Stream.unwrap(
          Effect.map(outbox.after(ws, null, 0), ({ cursor }) =>
            Stream.make(": connected\n\n").pipe(
              Stream.concat(
                Stream.unfoldEffect<readonly [number, number], string, never, never>(
                  [cursor, 1],
                  ([c, n]) => poll(c, n)
                )
              ),
              Stream.filter((chunk) => chunk.length > 0),
              Stream.encodeText
            ))
        )
      }

      return handlers
        .handle("signIn", ({ payload }) =>
          Effect.gen(function*() {
            const req = yield* HttpServerRequest.HttpServerRequest
            // A tenth of an address's budget per request: about 10 a minute at the default limit.
            const rate = yield* limiter.consume(addressBucket("sign-in", req, trusted), 60)
            if (!rate.allowed) {
              return yield* new ResourceExhausted({
                message: "Too many sign-in requests",
                retryAfterSeconds: rate.retryAfterSeconds
              })
            }
            // Looked up and mailed after the answer: its time says nothing of whether the email is a member's.
            yield* Effect.forkDaemon(
              sessions.requestLink(payload.email).pipe(
                Effect.catchAllCause((cause) => Effect.logError("Sign-in link failed", cause))
              )
            )
            return { sent: true as const }
          }))
        .handle("redeemLink", ({ path }) =>
          sessions.redeem(path.token).pipe(
            Effect.map((token) =>
              HttpServerResponse.empty({
                status: 303,
                headers: {
                  location: "/app",
                  "set-cookie": cookie(token, 30 * 24 * 60 * 60, secure),
                  "cache-control": "no-store",
                  "referrer-policy": "no-referrer"
                }
              })
            ),
            Effect.catchTag("InvalidArgument", (e) =>
              Effect.succeed(
                HttpServerResponse.text(page("Sign-in link expired", e.message), {
                  status: 400,
                  contentType: "text/html; charset=utf-8",
                  headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
                })
              ))
          ))
        .handle("me", () => Effect.flatMap(currentMember, sessions.profile))
        .handle("switchWorkspace", ({ payload }) =>
          Effect.flatMap(sessionToken, (token) =>
            sessions.switchWorkspace(token, payload.workspaceId)).pipe(
              Effect.flatMap(sessions.profile)
            ))
        .handle("signOut", () =>
          Effect.flatMap(sessionToken, sessions.signOut).pipe(
            Effect.zipRight(HttpServerResponse.json({ signedOut: true })),
            Effect.map(HttpServerResponse.setHeader("set-cookie", cookie("", 0, secure))),
            Effect.orDie
          ))
        .handle("listTools", () =>
          Effect.map(currentMember, (who) => ({
            tools: entries.filter((e) =>
              mayCall(who, e)
            ).map(({ tool: t }) => ({
              name: t.name,
              title: t.title,
              description: t.description,
              scope: t.scope,
              readOnly: t.hints.readOnly,
              destructive: t.hints.destructive,
              inputSchema: objectSchema(t.input)
            }))
          })))
        .handle("callTool", ({ path, payload }) =>
          Effect.gen(function*() {
            const who = yield* currentMember
            const entry = byName.get(path.name)
            if (entry === undefined) {
              return yield* new NotFound({ message: `No capability ${path.name}` })
            }
            if (!mayCall(who, entry)) {
              return yield* new PermissionDenied({ message: `A ${who.member.role} may not use ${entry.tool.name}` })
            }
            // The table's entries each need their own services; together, these.
            const value = yield* (callTool(entry.tool, who.principal, payload) as Effect.Effect<
              unknown,
              DomainError,
              ToolServices | Members | AuditLog
            >)
            return (yield* Schema.encode(entry.tool.output)(value).pipe(Effect.orDie)) as Record<string, unknown>
          }))
        .handle("events", () =>
          Effect.gen(function*() {
            const who = yield* currentMember
            const token = yield* sessionToken
            const open = feeds.get(who.member.id) ?? 0
            if (open >= FEEDS_PER_MEMBER) {
              return yield* new ResourceExhausted({ message: "Too many open event streams", retryAfterSeconds: 30 })
            }
            feeds.set(who.member.id, open + 1)
            const release = Effect.sync(() => {
              const n = (feeds.get(who.member.id) ?? 1) - 1
              if (n <= 0) feeds.delete(who.member.id)
              else feeds.set(who.member.id, n)
            })
            return HttpServerResponse.stream(feed(who, token).pipe(Stream.ensuring(release)), {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            })
          }))
    })
)
