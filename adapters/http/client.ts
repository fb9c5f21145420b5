/**
 * The typed client (`switchboard/client`): HttpApiClient over the server's own `Api`, so every route,
 * parameter, body and answer is typed from the definition the server serves (docs/client.md).
 *
 * - Credentials are given once: the API key goes to every route but the admin API's, which gets
 *   the admin token.
 * - An error answer (`{error: {code, message, requestId}}`) fails with the core error of its code
 *   (`NotFound`, `FailedPrecondition`, ...), the classes the API declares for its routes, carrying the
 *   answer's `requestId` (the server's log names it); any other non-2xx answer stays the HTTP
 *   client's `ResponseError`.
 * - Each group's client is built on its first use: a program that calls one group does not pay
 *   for the rest of the API's schemas.
 */
import {
  type HttpApi,
  HttpApiClient,
  type HttpApiEndpoint,
  type HttpApiGroup,
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "@effect/platform"
import { Context, Effect, Layer, Option, type ParseResult, Schema } from "effect"
import type { Simplify } from "effect/Types"
import * as Errors from "../../core/kernel/errors.ts"
import { Api } from "./api.ts"

export interface ClientOptions {
  /** The server, e.g. `http://localhost:8080` (a path prefix behind a proxy is kept). */
  readonly baseUrl: string | URL
  /** A workspace's API key (`svc_live_...`/`svc_test_...`), sent to every route but the admin API's. */
  readonly apiKey?: string | undefined
  /** The server's `ADMIN_TOKEN`, sent to the admin API (`/v1/admin`). */
  readonly adminToken?: string | undefined
}

/** An error answer: the core error of its code, with the id of the request it answered. */
export type ServerError = Errors.DomainError & { readonly requestId: string }

type Groups = typeof Api extends HttpApi.HttpApi<string, infer G, infer _E, infer _R> ? G : never

/** `urlParams` and `headers` are optional when every field in them is (the client sends `{}`). */
type Optional<K extends string, A> = [A] extends [never] ? {} : {} extends A ? { readonly [k in K]?: A }
: { readonly [k in K]: A }

type Fields<Path, UrlParams, Payload, Headers> =
  & ([Path] extends [void] ? {} : { readonly path: Path })
  & ([Payload] extends [never] ? {} : { readonly payload: Payload })
  & Optional<"urlParams", UrlParams>
  & Optional<"headers", Headers>

/**
 * One route: HttpApiClient's method, with the request optional when nothing in it is required. Its
 * errors are ServerError rather than the route's declared error schemas: every error answer is read
 * here (typedErrors), before HttpApiClient would decode it.
 */
type Method<Endpoint> = [Endpoint] extends [
  HttpApiEndpoint.HttpApiEndpoint<
    infer _Name,
    infer _Method,
    infer Path,
    infer UrlParams,
    infer Payload,
    infer Headers,
    infer Success,
    infer _Error,
    infer _R,
    infer _RE
  >
] ? <WithResponse extends boolean = false>(
    ...request: {} extends Fields<Path, UrlParams, Payload, Headers>
      ? [request?: Simplify<Fields<Path, UrlParams, Payload, Headers> & { readonly withResponse?: WithResponse }>]
      : [request: Simplify<Fields<Path, UrlParams, Payload, Headers> & { readonly withResponse?: WithResponse }>]
  ) => Effect.Effect<
    WithResponse extends true ? [Success, HttpClientResponse.HttpClientResponse] : Success,
    ServerError | HttpClientError.HttpClientError | ParseResult.ParseError
  >
  : never

/** The whole API, one property per group (`contacts`, `messages`, ..., `admin`), one method per route. */
export type Client = {
  readonly [Group in Groups as HttpApiGroup.HttpApiGroup.Name<Group>]: Group extends
    HttpApiGroup.HttpApiGroup<infer _Id, infer Endpoints, infer _GroupError, infer _R> ? {
      readonly [Endpoint in Endpoints as HttpApiEndpoint.HttpApiEndpoint.Name<Endpoint>]: Method<Endpoint>
    }
    : never
}

/** The error answer every route sends (adapters/http/platform.ts writes it). */
const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, requestId: Schema.String })
})
const decodeEnvelope = Schema.decodeUnknownOption(Schema.parseJson(ErrorEnvelope))

const byCode = Object.fromEntries(
  Object.entries(Errors.errorStatus).map(([tag, { code }]) => [code, tag as Errors.DomainError["_tag"]])
)

/** The core error an envelope names, or none (a 503 `unavailable`, a page that is not the envelope). */
const serverError = (
  response: HttpClientResponse.HttpClientResponse,
  body: string
): Option.Option<ServerError> =>
  Option.flatMap(
    decodeEnvelope(body),
    ({ error: { code, message, requestId } }) =>
      Option.map(domainError(response, code, message), (error) => Object.assign(error, { requestId }))
  )

const domainError = (
  response: HttpClientResponse.HttpClientResponse,
  code: string,
  message: string
): Option.Option<Errors.DomainError> => {
  switch (byCode[code]) {
    case "InvalidArgument":
      return Option.some(new Errors.InvalidArgument({ message }))
    case "Unauthenticated":
      return Option.some(new Errors.Unauthenticated({ message }))
    case "PermissionDenied":
      return Option.some(new Errors.PermissionDenied({ message }))
    case "NotFound":
      return Option.some(new Errors.NotFound({ message }))
    case "FailedPrecondition":
      return Option.some(new Errors.FailedPrecondition({ message }))
    case "ResourceExhausted":
      return Option.some(
        new Errors.ResourceExhausted({ message, retryAfterSeconds: Number(response.headers["retry-after"] ?? 1) })
      )
    case "Internal":
      return Option.some(new Errors.Internal({ message }))
    default:
      return Option.none()
  }
}

/**
 * Fails an error answer with its core error. The body is read here, so an answer that is not the
 * envelope fails as the HTTP client's status error (HttpApiClient could not read it again).
 */
const typedErrors = <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
  HttpClient.transformResponse(
    client,
    Effect.flatMap((response): Effect.Effect<
      HttpClientResponse.HttpClientResponse,
      ServerError | HttpClientError.ResponseError
    > =>
      response.status < 400 ?
        Effect.succeed(response) :
        Effect.flatMap(response.text, (body) =>
          Option.match(serverError(response, body), {
            onSome: (error) => Effect.fail<ServerError | HttpClientError.ResponseError>(error),
            onNone: () =>
              Effect.fail(
                new HttpClientError.ResponseError({
                  request: response.request,
                  response,
                  reason: "StatusCode",
                  description: `non 2xx status code: ${body.slice(0, 200)}`
                })
              )
          }))
    )
  )

type Route = (request?: object) => unknown

/** HttpApiClient encodes `urlParams` and `headers` even when the caller has none: every such schema accepts `{}`. */
const lenient = (methods: Record<string, Route>): Record<string, Route> =>
  Object.fromEntries(
    Object.entries(methods).map((
      [name, route]
    ) => [name, (request) => route({ urlParams: {}, headers: {}, ...request })])
  )

const withToken = (token: string | undefined) => (client: HttpClient.HttpClient) =>
  token === undefined ? client : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(token))

/** The typed client; it uses the `HttpClient` in context (`FetchHttpClient.layer` works on Node, Deno and browsers). */
export const makeClient = (options: ClientOptions): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (http) => {
    const client = {}
    for (const group of Object.keys(Api.groups)) {
      let methods: Record<string, Route> | undefined
      Object.defineProperty(client, group, {
        enumerable: true,
        get: () =>
          methods ??= lenient(Effect.runSync(HttpApiClient.group(Api, {
            group: group as never,
            baseUrl: options.baseUrl,
            httpClient: typedErrors(withToken(group === "admin" ? options.adminToken : options.apiKey)(http))
          })) as Record<string, Route>)
      })
    }
    return client as Client
  })

/** The client as a service, for programs that take their dependencies from layers. */
export class Switchboard extends Context.Tag("switchboard/Client")<Switchboard, Client>() {
  static readonly layer = (options: ClientOptions) => Layer.effect(Switchboard, makeClient(options))
}
