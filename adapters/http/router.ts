/**
 * HttpApiBuilder's serving path (`group`, `serve`, `toWebHandler`) with the same API, types and
 * behaviour, less two fiber-ref regions it pays on every request (docs/architecture.md,
 * "HttpApiBuilder's serving, rewritten"):
 * - HttpApiBuilder.group merges the group layer's context into the request's, per request
 *   (`Effect.mapInputContext`). Here each group's context is merged once, when the app is served,
 *   into the context the server starts each request's fiber with.
 * - HttpRouter.toHttpApp copies the request's context to add the route and its query, and runs the
 *   handler in an `Effect.locally` region. Here both are added to the request fiber's own context
 *   (the fiber starts with the request and ends with it: nodeServer.ts, web handlers).
 * The handler's path, headers and query are decoded synchronously, in the library's order (path,
 * body, headers, query) and with its errors; the HttpApi, its endpoints, middleware and the
 * OpenAPI document are the library's own. Routes match as HttpRouter matches them (find-my-way-ts,
 * HEAD answered by GET).
 *
 * Where it differs: a handler (and the middleware) runs with every group's services, not only its
 * own group's (all of ours are built from the same app layer, ApiLive); groups built with different
 * instances of one service are refused when the app is served. `serve` takes no middleware argument,
 * and mounted apps and prefixed routes (HttpRouter's, unused by HttpApi) are refused.
 *
 * It is part of the fast path (adapters/fastPath.ts): `group`, `serve` and `toWebHandler` below
 * are HttpApiBuilder's own when FastPath is off (FAST_PATH=false), so the handler files need not know.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApp,
  HttpMethod,
  HttpRouter,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  Multipart,
  UrlParams
} from "@effect/platform"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as Respondable from "@effect/platform/HttpServerRespondable"
import {
  Cause,
  Chunk,
  Context,
  Effect,
  Either,
  FiberRef,
  identity,
  Layer,
  Option,
  ParseResult,
  Schema,
  Scope,
  Tracer
} from "effect"
import { pipeArguments } from "effect/Pipeable"
import type * as AST from "effect/SchemaAST"
import * as FindMyWay from "find-my-way-ts"
import { Buffer } from "node:buffer"
import { FastPath } from "../fastPath.ts"

/** The context each group was built in, by the routes it registered (read once, when the app is served). */
const groupContexts = new WeakMap<HttpRouter.Route<any, any>, Context.Context<never>>()

/**
 * In a request's context when it runs in an app served here, with every group's context. Served by
 * HttpApiBuilder instead, a handler merges its group's context per request, as the library does.
 */
class Served extends Context.Tag("switchboard/http/router/Served")<Served, true>() {}

interface Item {
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  readonly handler: (request: any) => Effect.Effect<any, any, any>
  readonly withFullRequest: boolean
  readonly uninterruptible: boolean
}

/** The `handlers` a group's build function receives: HttpApiBuilder's, which that module does not export. */
const HandlersProto = {
  [HttpApiBuilder.HandlersTypeId]: { _Endpoints: identity },
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  handle(this: Handlers, name: string, handler: Item["handler"], options?: { readonly uninterruptible?: boolean }) {
    return makeHandlers(
      this.group,
      Chunk.append(this.handlers, {
        endpoint: this.group.endpoints[name]!,
        handler,
        withFullRequest: false,
        uninterruptible: options?.uninterruptible ?? false
      })
    )
  },
  handleRaw(this: Handlers, name: string, handler: Item["handler"], options?: { readonly uninterruptible?: boolean }) {
    return makeHandlers(
      this.group,
      Chunk.append(this.handlers, {
        endpoint: this.group.endpoints[name]!,
        handler,
        withFullRequest: true,
        uninterruptible: options?.uninterruptible ?? false
      })
    )
  }
}
interface Handlers {
  readonly group: {
    readonly endpoints: Record<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>
    readonly middlewares: ReadonlySet<HttpApiMiddleware.TagClassAny>
  }
  readonly handlers: Chunk.Chunk<Item>
}
const makeHandlers = (group: Handlers["group"], handlers: Chunk.Chunk<Item>): Handlers =>
  Object.assign(Object.create(HandlersProto), { group, handlers })

/** HttpApiBuilder.group, registering handlers that run in the served app's context (see the top). */
const fastGroup = (api: HttpApi.HttpApi.Any, groupName: string, build: (handlers: any) => any) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      // Without the scope the group was built in: a request runs in its own (as with the library's merge).
      const context = Context.omit(Scope.Scope)(yield* Effect.context<never>()) as Context.Context<never>
      const group = (api as any).groups[groupName] as Handlers["group"]
      const result = build(makeHandlers(group, Chunk.empty()))
      const handlers: Handlers = Effect.isEffect(result) ? yield* (result as Effect.Effect<Handlers>) : result
      const groupMiddleware = middlewareMap(group.middlewares, context)
      const routes: Array<HttpRouter.Route<any, any>> = []
      for (const item of handlers.handlers) {
        const route = handlerToRoute(item, middlewareMap(item.endpoint.middlewares, context, groupMiddleware), context)
        groupContexts.set(route, context)
        routes.push(route)
      }
      yield* router.concat(HttpRouter.fromIterable(routes))
    })
  )

/** The group the handler files build: ours (above), or HttpApiBuilder.group with the fast path off. */
export const group: typeof HttpApiBuilder.group =
  ((api: HttpApi.HttpApi.Any, groupName: string, build: (handlers: any) => any) =>
    Layer.unwrapEffect(
      Effect.map(
        FastPath,
        (
          fast
        ) => (fast ? fastGroup(api, groupName, build) : HttpApiBuilder.group(api as any, groupName as never, build))
      )
    )) as any

interface MiddlewareEntry {
  readonly tag: HttpApiMiddleware.TagClassAny
  readonly effect: any
}

const middlewareMap = (
  middleware: ReadonlySet<HttpApiMiddleware.TagClassAny>,
  context: Context.Context<never>,
  initial?: Map<string, MiddlewareEntry>
) => {
  const map = new Map(initial)
  middleware.forEach((tag) => map.set(tag.key, { tag, effect: Context.unsafeGet(context, tag as any) }))
  return map
}

const securityMiddleware = new WeakMap<MiddlewareEntry, Effect.Effect<any, any, any>>()

const applyMiddleware = (middleware: Map<string, MiddlewareEntry>, handler: Effect.Effect<any, any, any>) => {
  for (const entry of middleware.values()) {
    const effect = HttpApiMiddleware.SecurityTypeId in entry.tag ? security(entry) : entry.effect
    const provides = (entry.tag as any).provides as Context.Tag<any, any> | undefined
    if ((entry.tag as any).optional) {
      const previous = handler
      handler = Effect.matchEffect(effect, {
        onFailure: () => previous,
        onSuccess: provides !== undefined ? (value) => Effect.provideService(previous, provides, value) : () => previous
      })
    } else {
      handler = provides !== undefined
        ? Effect.provideServiceEffect(handler, provides, effect)
        : Effect.zipRight(effect, handler)
    }
  }
  return handler
}

const security = (entry: MiddlewareEntry) => {
  const cached = securityMiddleware.get(entry)
  if (cached !== undefined) return cached
  let effect: Effect.Effect<any, any, any> | undefined
  for (const [key, scheme] of Object.entries((entry.tag as any).security)) {
    const middleware = Effect.flatMap(HttpApiBuilder.securityDecode(scheme as any), entry.effect[key])
    effect = effect === undefined ? middleware : Effect.catchAll(effect, () => middleware)
  }
  const built = effect ?? Effect.void
  securityMiddleware.set(entry, built)
  return built
}

/**
 * A synchronous decoder; its ParseError is answered as the library's, an HttpApiDecodeError. A
 * schema whose effects are asynchronous (an async `filterEffect` or transformation) cannot decode
 * here: that is a defect (500, logged) naming it, not a 400 blaming the client.
 */
/** Whether a decode stopped at work it could not do synchronously (ParseResult's Forbidden, at any depth). */
const forbidden = (issue: ParseResult.ParseIssue): boolean => {
  if (issue._tag === "Forbidden") return true
  if ("issues" in issue) return (Array.isArray(issue.issues) ? issue.issues : [issue.issues]).some(forbidden)
  return "issue" in issue ? forbidden(issue.issue as ParseResult.ParseIssue) : false
}

const decoder = (schema: Schema.Schema.Any) => {
  const decode = Schema.decodeUnknownEither(schema as Schema.Schema<any, any, never>)
  return (input: unknown) => {
    const result = decode(input)
    if (Either.isLeft(result) && forbidden(result.left.issue)) {
      throw new Error(
        `router.ts decodes request schemas synchronously, and this one needs asynchronous effects: ${String(schema)}`
      )
    }
    return result
  }
}

const handlerToRoute = (item: Item, middleware: Map<string, MiddlewareEntry>, groupContext: Context.Context<never>) => {
  const endpoint = item.endpoint
  const isMultipartStream = Option.exists(
    endpoint.payloadSchema,
    ({ ast }) => HttpApiSchema.getMultipartStream(ast) !== undefined
  )
  const multipartLimits = Option.flatMapNullable(
    endpoint.payloadSchema,
    ({ ast }) => HttpApiSchema.getMultipart(ast) ?? HttpApiSchema.getMultipartStream(ast)
  )
  const decodePath = Option.getOrUndefined(Option.map(endpoint.pathSchema, decoder))
  const decodePayload = item.withFullRequest || isMultipartStream
    ? undefined
    : Option.getOrUndefined(Option.map(endpoint.payloadSchema, decoder))
  const decodeHeaders = Option.getOrUndefined(Option.map(endpoint.headersSchema, decoder))
  const decodeUrlParams = Option.getOrUndefined(
    Option.map(endpoint.urlParamsSchema, (schema) => {
      const decode = decoder(schema)
      return (params: unknown) =>
        decode(normalizeUrlParams(params as Record<string, string | ReadonlyArray<string>>, schema.ast))
    })
  )
  const encodeSuccess = Schema.encodeEither(
    successSchema(endpoint.successSchema) as Schema.Schema<any, HttpServerResponse.HttpServerResponse, never>
  )
  const respond = (
    value: unknown
  ) => (HttpServerResponse.isServerResponse(value) ? Effect.succeed(value) : encodeSuccess(value))

  // After the body: headers, the query, then the handler (the library's order).
  const rest = (
    request: Record<string, unknown>,
    httpRequest: HttpServerRequest.HttpServerRequest,
    urlParams: unknown
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown> => {
    if (decodeHeaders !== undefined) {
      const headers = decodeHeaders(httpRequest.headers)
      if (Either.isLeft(headers)) return HttpApiDecodeError.refailParseError(headers.left)
      request["headers"] = headers.right
    }
    if (decodeUrlParams !== undefined) {
      const params = decodeUrlParams(urlParams)
      if (Either.isLeft(params)) return HttpApiDecodeError.refailParseError(params.left)
      request["urlParams"] = params.right
    }
    return Effect.flatMap(item.handler(request), respond)
  }

  const run = (
    context: Context.Context<never>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown> => {
    const httpRequest = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
    const urlParams = Context.unsafeGet(context, HttpServerRequest.ParsedSearchParams)
    const request: Record<string, unknown> = { request: httpRequest }
    if (decodePath !== undefined) {
      const path = decodePath(Context.unsafeGet(context, HttpRouter.RouteContext).params)
      if (Either.isLeft(path)) return HttpApiDecodeError.refailParseError(path.left)
      request["path"] = path.right
    }
    if (decodePayload !== undefined) {
      return Effect.flatMap(requestPayload(httpRequest, urlParams, multipartLimits), (body) => {
        const payload = decodePayload(body)
        if (Either.isLeft(payload)) return HttpApiDecodeError.refailParseError(payload.left)
        request["payload"] = payload.right
        return rest(request, httpRequest, urlParams)
      })
    }
    if (isMultipartStream) {
      request["payload"] = Option.match(multipartLimits, {
        onNone: () => httpRequest.multipartStream,
        onSome: (limits) => Multipart.withLimitsStream(httpRequest.multipartStream, limits)
      })
    }
    return rest(request, httpRequest, urlParams)
  }
  const merged = within(
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, unknown>((fiber) =>
      run(fiber.currentContext)
    ),
    groupContext
  )
  const handler = Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, unknown>((
    fiber
  ) => (fiber.currentContext.unsafeMap.has(Served.key) ? run(fiber.currentContext) : merged))
  return HttpRouter.makeRoute(
    endpoint.method,
    endpoint.path,
    applyMiddleware(
      middleware,
      Effect.catchIf(handler, ParseResult.isParseError, HttpApiDecodeError.refailParseError)
    ) as HttpRouter.Route.Handler<unknown, unknown>,
    { uninterruptible: item.uninterruptible }
  )
}

/** The body the endpoint's payload schema decodes, by content type (HttpApiBuilder's rules). */
const requestPayload = (
  request: HttpServerRequest.HttpServerRequest,
  urlParams: unknown,
  multipartLimits: Option.Option<Multipart.withLimits.Options>
): Effect.Effect<unknown, never, any> => {
  if (!HttpMethod.hasBody(request.method as HttpMethod.HttpMethod)) return Effect.succeed(urlParams)
  const contentType = request.headers["content-type"]
    ? request.headers["content-type"].toLowerCase().trim()
    : "application/json"
  if (contentType.includes("application/json")) return Effect.orDie(request.json)
  if (contentType.includes("multipart/form-data")) {
    return Effect.orDie(
      Option.match(multipartLimits, {
        onNone: () => request.multipart,
        onSome: (limits) => Multipart.withLimits(request.multipart, limits)
      })
    )
  }
  if (contentType.includes("x-www-form-urlencoded")) {
    return Effect.map(Effect.orDie(request.urlParamsBody), UrlParams.toRecord)
  }
  if (contentType.startsWith("text/")) return Effect.orDie(request.text)
  return Effect.map(Effect.orDie(request.arrayBuffer), (buffer) => new Uint8Array(buffer))
}

const isSingleStringType = (ast: AST.AST, key?: string): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "Literal":
    case "TemplateLiteral":
    case "Enums":
      return true
    case "TypeLiteral": {
      if (key === undefined) return false
      const ps = ast.propertySignatures.find((ps) => ps.name === key)
      return ps !== undefined
        ? isSingleStringType(ps.type, key)
        : ast.indexSignatures.some((is) => Schema.is(Schema.make(is.parameter))(key) && isSingleStringType(is.type))
    }
    case "Union":
      return ast.types.some((type) => isSingleStringType(type, key))
    case "Suspend":
      return isSingleStringType(ast.f(), key)
    case "Refinement":
    case "Transformation":
      return isSingleStringType(ast.from, key)
  }
  return false
}

/** A query key the schema expects as an array gets a single value wrapped in one (HttpApiBuilder's rule). */
const normalizeUrlParams = (params: Record<string, string | ReadonlyArray<string>>, ast: AST.AST) => {
  const out: Record<string, string | ReadonlyArray<string>> = {}
  for (const key in params) {
    const value = params[key]!
    out[key] = Array.isArray(value) || isSingleStringType(ast, key) ? value : [value as string]
  }
  return out
}

/** The success schemas as one encoder to a response, with each one's status and encoding. */
const successSchema = (schema: Schema.Schema.Any) => {
  const schemas = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(schemas, schema)
  return Schema.Union(...Array.from(schemas, toResponse(HttpApiSchema.getStatusSuccessAST)))
}

const responseSchema = Schema.declare(HttpServerResponse.isServerResponse)

/** A schema encoding its value to a response, with the status `statusOf` reads off its annotations. */
const toResponse = (statusOf: (ast: AST.AST) => number) => (schema: Schema.Schema.Any) =>
  Schema.transformOrFail(responseSchema, schema as Schema.Schema<any, any, never>, {
    decode: (_, __, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, _, "Encode only schema")),
    encode: (data, _, ast) => {
      const status = statusOf(ast.to)
      if (HttpApiSchema.isVoid(ast.to)) return ParseResult.succeed(HttpServerResponse.empty({ status }))
      const encoding = HttpApiSchema.getEncoding(ast.to)
      switch (encoding.kind) {
        case "Json": {
          // The text itself, not its UTF-8 bytes (HttpServerResponse.json's body): Node writes a string
          // body with the status line and headers in one write, and bytes in a second (writev).
          let text: string
          try {
            // `undefined` (a Schema.Unknown success) is an empty body, as HttpServerResponse.json sends it.
            text = JSON.stringify(data) ?? ""
          } catch (error) {
            return ParseResult.fail(new ParseResult.Type(ast, error, "Could not encode to JSON"))
          }
          return ParseResult.succeed(
            HttpServerResponse.raw(text, {
              status,
              contentType: encoding.contentType,
              contentLength: Buffer.byteLength(text)
            })
          )
        }
        case "Text":
          return ParseResult.succeed(
            HttpServerResponse.text(data as string, { status, contentType: encoding.contentType })
          )
        case "Uint8Array":
          return ParseResult.succeed(
            HttpServerResponse.uint8Array(data as Uint8Array, { status, contentType: encoding.contentType })
          )
        case "UrlParams":
          return ParseResult.succeed(
            HttpServerResponse.urlParams(data as UrlParams.Input, { status, contentType: encoding.contentType })
          )
      }
    }
  })

/**
 * The app over the routes the groups registered: each request's route and query are added to its
 * fiber's context, and the handler runs there, interruptible unless its route says otherwise. Answers
 * the app and the context to serve it in (the groups' contexts, merged once).
 */
const build = Effect.gen(function*() {
  const { api, context: apiContext } = yield* HttpApi.Api
  const routerConfig = yield* FiberRef.get(HttpRouter.currentRouterConfig)
  const router = yield* HttpApiBuilder.Router.router
  if (Chunk.size(router.mounts) > 0 || Chunk.some(router.routes, (route) => Option.isSome(route.prefix))) {
    return yield* Effect.dieMessage(
      "router.ts serves neither mounted apps nor prefixed routes (an HttpApiGroup's prefix is in its paths)"
    )
  }
  const find = FindMyWay.make<HttpRouter.Route<unknown, unknown>>(routerConfig)
  const contexts = new Set<Context.Context<never>>()
  for (const route of router.routes) {
    // A route that is not a group's (the OpenAPI document) may answer any Respondable.
    const context = groupContexts.get(route)
    const served = context === undefined
      ? HttpRouter.makeRoute(route.method, route.path, Effect.flatMap(route.handler, Respondable.toResponse), {
        uninterruptible: route.uninterruptible
      })
      : route
    if (route.method === "*") find.all(route.path, served)
    else find.on(route.method, route.path, served)
    if (context !== undefined) contexts.add(context)
  }
  // Each group's context once (it is shared by all the group's routes).
  let groups = Context.empty() as Context.Context<never>
  for (const context of contexts) groups = mergeDistinct(groups, context)
  groups = Context.add(groups, Served, true)
  const routed = Effect.withFiberRuntime<
    HttpServerResponse.HttpServerResponse,
    unknown,
    HttpServerRequest.HttpServerRequest
  >((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const found = find.find(request.method as HttpMethod.HttpMethod, request.url) ??
      (request.method === "HEAD" ? find.find("GET", request.url) : undefined)
    if (found === undefined) return Effect.fail(new HttpServerError.RouteNotFound({ request }))
    const route = found.handler
    const routeContext: HttpRouter.RouteContext = {
      [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId,
      route,
      params: found.params
    }
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (span._tag === "Some" && span.value._tag === "Span") span.value.attribute("http.route", route.path)
    const handler = route.handler as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, never>
    // Set, not `Effect.locally`: the request's fiber ends with the request, so nothing needs restoring.
    return Effect.zipRight(
      FiberRef.set(
        FiberRef.currentContext,
        // One copy of the request's context with both added: each copy copies the whole context (nodeServer.ts).
        Context.merge(
          fiber.currentContext,
          Context.make(HttpServerRequest.ParsedSearchParams, found.searchParams).pipe(
            Context.add(HttpRouter.RouteContext, routeContext)
          )
        )
      ),
      route.uninterruptible ? handler : Effect.interruptible(handler)
    )
  })
  const app = applyMiddleware(
    middlewareMap((api as unknown as HttpApi.HttpApi.AnyWithProps).middlewares, apiContext),
    routed
  )
  const middleware = yield* (yield* HttpApiBuilder.Middleware).retrieve
  const encodeError = Schema.encodeUnknown(errorSchema(api))
  const handled = (app as HttpApp.Default<unknown, unknown>).pipe(
    middleware as unknown as (app: HttpApp.Default<unknown, unknown>) => HttpApp.Default<unknown, unknown>,
    (app) =>
      Effect.catchAllCause(
        app,
        (cause) =>
          Effect.matchEffect(Effect.provide(encodeError(Cause.squash(cause)), apiContext), {
            onFailure: () => Effect.failCause(cause),
            onSuccess: Effect.succeed
          })
      )
  )
  return { app: handled as HttpApp.Default<unknown, unknown>, context: groups }
})

/** `self` in `context`, whose services give way to the caller's (HttpApiBuilder's per-request merge). */
const within = <A, E, R>(self: Effect.Effect<A, E, R>, context: Context.Context<never>): Effect.Effect<A, E, any> =>
  Effect.mapInputContext(self, (input: Context.Context<any>) => Context.merge(context, input) as Context.Context<R>)

/** Two groups built with different instances of one service would change what a handler sees: refused. */
const mergeDistinct = (into: Context.Context<never>, from: Context.Context<never>) => {
  for (const [key, value] of from.unsafeMap) {
    const present = into.unsafeMap.get(key)
    if (present !== undefined && present !== value) {
      throw new Error(`router.ts: two groups were built with different ${key} services`)
    }
  }
  return Context.merge(into, from)
}

const errorSchema = (api: HttpApi.HttpApi.Any) => {
  const schemas = new Set<Schema.Schema.Any>()
  const a = api as unknown as HttpApi.HttpApi.AnyWithProps
  HttpApiSchema.deunionize(schemas, a.errorSchema)
  for (const group of Object.values(a.groups)) {
    for (const endpoint of Object.values(group.endpoints)) HttpApiSchema.deunionize(schemas, endpoint.errorSchema)
    HttpApiSchema.deunionize(schemas, group.errorSchema)
  }
  return Schema.Union(...Array.from(schemas, toResponse(HttpApiSchema.getStatusErrorAST)))
}

/**
 * HttpApiBuilder.serve: the API on the HttpServer, each request's fiber started in the groups'
 * context (the server's own services win, as they do in HttpApiBuilder's per-request merge).
 */
const fastServe: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | HttpApi.Api
> = Layer.scopedDiscard(
  Effect.flatMap(
    build,
    ({ app, context }) =>
      Effect.flatMap(HttpServer.HttpServer, (server) => within(server.serve(app as HttpApp.Default), context))
  )
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])) as any

/** Serves the app as above, or by HttpApiBuilder.serve() with the fast path off. */
export const serve = (): Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices | HttpApi.Api
> => Layer.unwrapEffect(Effect.map(FastPath, (fast) => (fast ? fastServe : HttpApiBuilder.serve())))

/**
 * HttpApiBuilder.toWebHandler over the same app (tests, in-process clients, Deno); with the fast
 * path off (FastPath in `layer`), HttpApiBuilder's own app, as its toWebHandler builds it.
 */
export const toWebHandler: typeof HttpApiBuilder.toWebHandler = (layer, options) =>
  HttpApp.toWebHandlerLayerWith(Layer.mergeAll(layer, HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer), {
    memoMap: options?.memoMap,
    middleware: options?.middleware as any,
    toHandler: (runtime) =>
      Context.get(runtime.context, FastPath)
        ? Effect.map(Effect.provide(build, runtime), ({ app, context }) => within(app, context) as HttpApp.Default)
        : Effect.provide(HttpApiBuilder.httpApp, runtime)
  }) as any
