/**
 * Node's HTTP server for the app, in place of `@effect/platform-node`'s NodeHttpServer.
 *
 * Why our own: NodeHttpServer provides each request (`Effect.provideService`) and its scope
 * (`HttpApp.toHandled`) to an already running fiber, and every provided service is a fiber-ref
 * region paid on every request. Here each request's fiber STARTS with the request and its scope in
 * its context, so neither region exists (docs/architecture.md, "Our own Node server"). Everything else
 * follows NodeHttpServer: the request type, body limits (HttpIncomingMessage.MaxBodySize),
 * pre-response handlers, cookies, HEAD, streamed bodies, and a client that disconnects interrupts
 * the request's fiber.
 *
 * Beyond NodeHttpServer: what Node's parser refuses (a malformed request, headers over 16 KB, a
 * request that does not arrive in time) gets the app's error envelope and a request id instead of
 * Node's bare status line, and a connection is given bounded time to send its request.
 *
 * No spans unless tracing is on (an OTLP endpoint is configured, adapters/telemetry/otlp.ts): then
 * each request gets a server span (telemetry/tracing.ts), as NodeHttpServer gives it; off, not even
 * that wrapper runs.
 *
 * Part of the fast path (adapters/fastPath.ts): with it off, `layer` is NodeHttpServer itself, on a
 * Node server given the same timeouts, and what is "beyond NodeHttpServer" above is not done.
 */
import {
  Cookies,
  type Headers,
  HttpApp,
  HttpIncomingMessage,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  type Multipart,
  UrlParams
} from "@effect/platform"
import { NodeHttpServer, NodeMultipart, NodeStream } from "@effect/platform-node"
import {
  Cause,
  Chunk,
  Context,
  Effect,
  Exit,
  type Fiber,
  FiberRef,
  FiberRefs,
  identity,
  Inspectable,
  Layer,
  Option,
  Runtime,
  Scope,
  Stream
} from "effect"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { type Duplex, Readable } from "node:stream"
import { displayText } from "../../core/kernel/display.ts"
import { FastPath } from "../fastPath.ts"
import { serverSpan } from "../telemetry/tracing.ts"
import { answeredByServer, CORS_HEADERS, DEFAULT_TIMEOUTS, errorBody, requestIdFor, type Timeouts } from "./platform.ts"

/** The request as the app sees it (HttpServerRequest) over Node's IncomingMessage. */
class NodeRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  private bodyEffect: Effect.Effect<Buffer, HttpServerError.RequestError> | undefined
  private multipartEffect: HttpServerRequest.HttpServerRequest["multipart"] | undefined
  private cachedCookies: Record<string, string> | undefined

  constructor(
    readonly source: Http.IncomingMessage,
    readonly response: Http.ServerResponse,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string
  ) {
    super()
  }

  private readonly onError = (cause: unknown): HttpServerError.RequestError =>
    new HttpServerError.RequestError({ request: this, reason: "Decode", cause })

  get originalUrl() {
    return this.source.url ?? "/"
  }
  get method() {
    return (this.source.method ?? "GET").toUpperCase() as HttpServerRequest.HttpServerRequest["method"]
  }
  get headers(): Headers.Headers {
    // Node already lower-cases the names; the object is used as is, like NodeHttpServer does.
    return this.headersOverride ?? (this.source.headers as Headers.Headers)
  }
  get remoteAddress() {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }
  get cookies() {
    return (this.cachedCookies ??= Cookies.parseHeader(this.headers["cookie"] ?? ""))
  }
  /**
   * The body, read once (a stream is consumed only once) within the MaxBodySize in force. Past the
   * limit it stops reading but keeps the socket, so the error response still reaches the client
   * (`send` then closes the connection). NodeStream.toString would destroy the socket instead.
   */
  get bytes(): Effect.Effect<Buffer, HttpServerError.RequestError> {
    return (this.bodyEffect ??= once(
      Effect.flatMap(
        HttpIncomingMessage.MaxBodySize,
        (max) => readBody(this.source, Option.getOrUndefined(Option.map(max, Number)), this.onError)
      )
    ))
  }
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (body) => body.toString("utf8"))
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.tryMap(this.text, {
      try: (text) => (text === "" ? null : (JSON.parse(text) as unknown)),
      catch: this.onError
    })
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(
      this.text,
      (text) => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.onError })
    )
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.map(
      this.bytes,
      (body) => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer
    )
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable<HttpServerError.RequestError>(() => this.source, this.onError)
  }
  get multipart() {
    return (this.multipartEffect ??= once(NodeMultipart.persisted(this.source, this.source.headers)))
  }
  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return NodeMultipart.stream(this.source, this.source.headers)
  }
  get upgrade(): HttpServerRequest.HttpServerRequest["upgrade"] {
    return Effect.fail(
      new HttpServerError.RequestError({
        request: this,
        reason: "Decode",
        description: "WebSocket upgrades are not served"
      })
    )
  }
  modify(
    options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }
  ): NodeRequest {
    return new NodeRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride
    )
  }
  toJSON() {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl }
  }
}

/**
 * `self` run at most once: the first caller runs it, callers meanwhile wait for its exit, later ones
 * get it. What Effect.cached does for a request's body (a stream is read only once), without its
 * clock reads, Deferred and fiber-ref diff on every request.
 */
const once = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  let done: Exit.Exit<A, E> | undefined
  let waiting: Array<(exit: Exit.Exit<A, E>) => void> | undefined
  // Uninterruptible from claiming the run to the exit's handler: an interruption in between would
  // leave later callers waiting for an exit that never comes.
  return Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      if (done !== undefined) return done
      if (waiting !== undefined) return restore(Effect.async<A, E>((resume) => void waiting!.push(resume)))
      waiting = []
      return Effect.onExit(restore(self), (exit) =>
        Effect.sync(() => {
          done = exit
          for (const resume of waiting!) resume(exit)
          waiting = undefined
        }))
    })
  )
}

/** Reads a request body into memory; fails with "maxBytes exceeded" past `maxBytes` and stops reading. */
const readBody = <E>(source: Http.IncomingMessage, maxBytes: number | undefined, onError: (cause: unknown) => E) =>
  Effect.async<Buffer, E>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onFail)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (maxBytes !== undefined && size > maxBytes) {
        stop()
        source.pause()
        resume(Effect.fail(onError(new Error("maxBytes exceeded"))))
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    const onFail = (cause: unknown) => {
      stop()
      resume(Effect.fail(onError(cause)))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onFail)
    return Effect.sync(stop)
  })

const responseError = (request: NodeRequest, response: HttpServerResponse.HttpServerResponse, cause: unknown) =>
  new HttpServerError.ResponseError({ request, response, reason: "Decode", cause })

/**
 * Writes a streamed body chunk by chunk, waiting for `drain` when Node's buffer is full, then ends
 * the response. A stream that fails half way destroys the response: the status line is gone, and
 * a truncated body must not look complete.
 */
const writeStream = (
  request: NodeRequest,
  response: HttpServerResponse.HttpServerResponse,
  stream: Stream.Stream<Uint8Array, unknown>
): Effect.Effect<void, HttpServerError.ResponseError> => {
  const res = request.response
  const drained = Effect.unsafeMakeLatch(true)
  const onDrain = () => drained.unsafeOpen()
  res.on("drain", onDrain)
  return stream.pipe(
    Stream.runForEachChunk((chunk) =>
      Effect.suspend(() => {
        let full = false
        for (const bytes of Chunk.toReadonlyArray(chunk)) full = !res.write(bytes)
        if (!full) return Effect.void
        drained.unsafeClose()
        return drained.await
      })
    ),
    Effect.matchCauseEffect({
      onSuccess: () => Effect.sync(() => void res.end()),
      onFailure: (cause) => {
        res.destroy()
        return Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause)
          : Effect.fail(responseError(request, response, Cause.squash(cause)))
      }
    }),
    Effect.ensuring(Effect.sync(() => res.off("drain", onDrain))),
    Effect.interruptible
  ) as Effect.Effect<void, HttpServerError.ResponseError>
}

/** How long a connection closed with its request's body unread goes on reading (and dropping) it. */
const LINGER_MS = 2_000

/**
 * A lingering close, as nginx and Apache do: Node closes the connection once the answer is flushed
 * (`destroySoon`), and closing a socket with unread bytes resets it. A client still sending its body
 * then fails its next write (EPIPE), and Node's client drops the answer it had received with it.
 * Instead: half-close after the answer, read the rest of the body (Node discards it), and close once
 * it has arrived, the client closes its side, or LINGER_MS pass.
 */
const lingerOnClose = (source: Http.IncomingMessage) => {
  const socket: Socket = source.socket
  socket.destroySoon = () => {
    linger(socket, (close) => (source.complete ? close() : source.once("end", close)))
    socket.end()
  }
}

/**
 * Reads on (what arrives is dropped) until the client ends its side, `until` calls back, or
 * LINGER_MS pass, then closes once the answer is flushed: a socket closed with unread bytes is reset.
 */
const linger = (socket: Duplex, until?: (close: () => void) => void) => {
  const close = () => (socket.writableFinished ? socket.destroy() : socket.once("finish", () => socket.destroy()))
  const timer = setTimeout(close, LINGER_MS)
  socket.once("close", () => clearTimeout(timer))
  socket.once("end", close)
  until?.(close)
}

/** Whether the request carries a body (HTTP/1.1 frames one only by Content-Length or Transfer-Encoding). */
const hasBody = (source: Http.IncomingMessage) =>
  source.headers["transfer-encoding"] !== undefined || Number(source.headers["content-length"] ?? "0") > 0

/** Sockets onClientError answered: the rest of their request makes the parser fail again, and is dropped. */
const refused = new WeakSet<Duplex>()

/** Sends `response` on Node's ServerResponse; resolves once the body is handed to Node. */
const send = (
  request: NodeRequest,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<void, HttpServerError.ResponseError> => {
  const res = request.response
  if (res.writableEnded || res.destroyed) return Effect.void
  let headers: Http.OutgoingHttpHeaders = response.headers
  // A body not received in full (refused for its size, or never read): answer, then close the
  // connection rather than keep it for another request. A request without a body is not yet
  // `complete` while the app answers within Node's `request` event (no I/O awaited): it keeps it.
  if (!request.source.complete && hasBody(request.source)) {
    headers = { ...headers, connection: "close" }
    lingerOnClose(request.source)
  }
  if (!Cookies.isEmpty(response.cookies)) {
    const cookies = Cookies.toSetCookieHeaders(response.cookies)
    const existing = response.headers["set-cookie"]
    headers = { ...headers, "set-cookie": existing === undefined ? cookies : [...cookies, existing] }
  }
  const body = response.body
  // Form data is encoded by the web Response, which also chooses the multipart boundary.
  const form = body._tag === "FormData" ? new Response(body.formData) : undefined
  if (form !== undefined) {
    const own: Http.OutgoingHttpHeaders = { ...headers }
    form.headers.forEach((value, name) => (own[name] = value))
    headers = own
  }
  res.writeHead(response.status, headers)
  if (request.method === "HEAD" || body._tag === "Empty") {
    res.end()
    return Effect.void
  }
  switch (body._tag) {
    case "Uint8Array":
      res.end(body.body)
      return Effect.void
    case "Raw":
      if (typeof body.body === "string" || body.body instanceof Uint8Array) {
        res.end(body.body)
        return Effect.void
      }
      if (body.body instanceof Readable) {
        const readable = body.body
        return writeStream(request, response, NodeStream.fromReadable(() => readable, identity))
      }
      res.destroy()
      return Effect.fail(
        responseError(request, response, new TypeError("A raw body must be a string, bytes or a Node Readable"))
      )
    case "FormData":
      return writeStream(request, response, Stream.fromReadableStream(() => form!.body!, identity))
    case "Stream":
      return writeStream(request, response, body.stream)
  }
}

/**
 * The app around one request: pre-response handlers, then the response is written. A failure the
 * app left unhandled becomes the platform's error response; one while responding (a pre-response
 * handler, a failing stream) ends the exchange with a bare 500 or, once the status line is out, a
 * destroyed response. Both are logged. Uninterruptible like HttpApp.toHandled: the router makes
 * each handler interruptible unless its route says otherwise.
 */
const handle = (
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>
) => {
  const withRequest = <A, E>(
    f: (request: NodeRequest, fiber: Fiber.RuntimeFiber<unknown, unknown>) => Effect.Effect<A, E>
  ) =>
    Effect.withFiberRuntime<A, E>((fiber) =>
      f(Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest) as NodeRequest, fiber)
    )
  const respond = (response: HttpServerResponse.HttpServerResponse) =>
    withRequest((request, fiber) => {
      const before = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
      return Option.isNone(before)
        ? send(request, response)
        : Effect.flatMap(before.value(request, response), (r) => send(request, r))
    })
  // A client that went away, or an unknown route on an app without its own 404 (causeResponse
  // answers it), is not an error worth a log line.
  const logged = (message: string, cause: Cause.Cause<unknown>) =>
    Cause.isInterruptedOnly(cause) ||
      Option.exists(Cause.failureOption(cause), (e) => e instanceof HttpServerError.RouteNotFound)
      ? Effect.void
      : Effect.logError(message, cause)
  const answered = Effect.matchCauseEffect(app, {
    onSuccess: respond,
    onFailure: (cause) =>
      Effect.flatMap(
        HttpServerError.causeResponse(cause),
        ([response]) =>
          Effect.zipRight(logged("Request failed outside the app's error handling", cause), respond(response))
      )
  }).pipe(
    Effect.catchAllCause((cause) =>
      withRequest((request) => {
        const res = request.response
        if (!res.headersSent && !res.destroyed) res.writeHead(500).end()
        else if (!res.writableEnded) res.destroy()
        return logged("Response failed", cause)
      })
    )
  )
  return Effect.uninterruptible(
    Effect.onExit(
      answered,
      (exit) => Effect.flatMap(Scope.Scope, (scope) => Scope.close(scope as Scope.CloseableScope, exit))
    )
  )
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`

/** The envelope of a request refused before the app, with its headers; the connection is closed after it. */
const refusal = (message: string, requestId: string) => {
  const body = JSON.stringify(errorBody("invalid_argument", message, requestId))
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": requestId,
    ...CORS_HEADERS,
    connection: "close"
  }
  return { body, headers }
}

/**
 * A raw HTTP/1.1 answer carrying the error envelope, for a socket that has no ServerResponse to
 * write with. The answer to a HEAD request has the envelope's headers and no body (RFC 9110, 9.3.2).
 */
const rawEnvelope = (status: number, message: string, requestId: string, head = false) => {
  const { body, headers } = refusal(message, requestId)
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  return `HTTP/1.1 ${status} ${Http.STATUS_CODES[status]}\r\n${lines}\r\n${head ? "" : body}`
}

/** A refusal before the app, logged as the access log writes an answered request's line. */
type LogRefusal = (method: string, status: number, message: string, requestId: string) => void

const RAW_REQUEST_ID = /\r\nx-request-id:[ \t]*([A-Za-z0-9_-]{1,64})[ \t]*\r\n/i

/**
 * Node's `clientError`: its parser refused the bytes (`HPE_*`: 400, or 431 for a URL or headers over
 * 16 KB) or the request did not arrive within the timeouts (408). Answered like the app answers
 * (envelope, `X-Request-Id`, CORS), then the connection is closed (lingering: see `linger`), since
 * nothing more on it can be parsed.
 * A socket that is gone or no longer writable, an error that is not about the request (ECONNRESET),
 * or a response already under way (its status line is out) is only destroyed, as Node does.
 */
const onClientError = (timeouts: Timeouts, log: LogRefusal) => (error: Error, socket: Duplex) => {
  if (refused.has(socket)) return
  const { code = "", reason } = error as Error & { code?: string; reason?: string }
  const timedOut = code === "ERR_HTTP_REQUEST_TIMEOUT"
  // The response of a request still being received (a slow body), if any; Node's own handler looks at it too.
  const inFlight = (socket as Duplex & { _httpMessage?: Http.ServerResponse })._httpMessage
  if (!socket.writable || !(timedOut || code.startsWith("HPE_")) || inFlight?.headersSent === true) {
    socket.destroy()
    return
  }
  const [status, message] = timedOut
    ? [
      408,
      `The request did not arrive in time: headers are allowed ${seconds(timeouts.headersMs)}, the whole request ${
        seconds(timeouts.requestMs)
      }`
    ]
    : code === "HPE_HEADER_OVERFLOW"
    ? [431, "The request line and headers exceed 16 KB"]
    : [400, `Malformed HTTP request (${displayText(reason ?? code, 100)})`]
  // A client's valid id is echoed: from the parsed request, or else from the bytes the parser refused.
  const raw = (error as Error & { rawPacket?: Buffer }).rawPacket?.toString("latin1")
  const requestId = requestIdFor(
    (inFlight?.req.headers["x-request-id"] as string | undefined) ??
      (raw === undefined ? undefined : RAW_REQUEST_ID.exec(raw)?.[1])
  )
  const method = inFlight?.req.method ?? (raw === undefined ? undefined : /^[A-Z]{1,16}(?= )/.exec(raw)?.[0]) ?? "-"
  refused.add(socket)
  socket.end(rawEnvelope(status, message, requestId, method === "HEAD"))
  // A request the app already has is logged by its access log, with this status (platform.ts).
  if (inFlight === undefined) log(method, status, message, requestId)
  else answeredByServer.set(inFlight.req, { status, message })
  // Not destroyed at once: a client still sending its body would be reset and lose the answer.
  linger(socket)
}

/**
 * Node's server with the timeouts (both paths). The fast path answers a request without `Host`
 * itself (`onRequest`), in the envelope; with `requireHostHeader` Node would send a bare 400.
 */
const createServer = (timeouts: Timeouts, requireHostHeader = true) =>
  Http.createServer({
    requireHostHeader,
    requestTimeout: timeouts.requestMs,
    headersTimeout: timeouts.headersMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // How often Node looks for requests past their timeouts (default 30 s, which would let a
    // request run up to 30 s over): every second, or more often for short test timeouts.
    connectionsCheckingInterval: Math.min(1000, Math.ceil(timeouts.headersMs / 4))
  })

const make = (options: { readonly port: number; readonly host: string; readonly timeouts?: Timeouts | undefined }) =>
  Effect.gen(function*() {
    const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS
    const server = createServer(timeouts, false)
    const logRuntime = yield* Effect.runtime<never>()
    const log: LogRefusal = (method, status, message, requestId) =>
      Runtime.runFork(logRuntime)(
        Effect.logInfo(`Refused: ${displayText(method, 16)} - ${status} (${message}) requestId=${requestId}`)
      )
    server.on("clientError", onClientError(timeouts, log))
    // CONNECT (a proxy tunnel) is no method of this API: answered, not dropped without a word.
    server.on("connect", (req: Http.IncomingMessage, socket: Duplex) => {
      const requestId = requestIdFor(req.headers["x-request-id"] as string | undefined)
      const message = "CONNECT is not supported"
      socket.end(rawEnvelope(405, message, requestId))
      linger(socket)
      log("CONNECT", 405, message, requestId)
    })
    // Requests not yet answered, for the shutdown's log.
    let inFlight = 0
    server.on("request", (_req: Http.IncomingMessage, res: Http.ServerResponse) => {
      inFlight++
      res.once("close", () => inFlight--)
    })
    yield* Effect.acquireRelease(
      Effect.async<void, HttpServerError.ServeError>((resume) => {
        const onError = (cause: unknown) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
        server.once("error", onError)
        server.listen(options.port, options.host, () => {
          server.off("error", onError)
          resume(Effect.void)
        })
      }),
      // Stops accepting connections and waits for in-flight requests to be answered.
      () =>
        Effect.zipRight(
          Effect.suspend(() => Effect.logInfo(`Draining: ${inFlight} request(s) in flight`)),
          Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
        )
    )
    // A TCP listener (port and host) always has an AddressInfo.
    const address = server.address() as AddressInfo
    return HttpServer.make({
      address: {
        _tag: "TcpAddress",
        hostname: address.address === "::" ? "0.0.0.0" : address.address,
        port: address.port
      },
      serve: (httpApp, middleware) =>
        Effect.gen(function*() {
          const runtime = yield* Effect.runtime<never>()
          const app = middleware === undefined ? httpApp : middleware(httpApp)
          const handled = handle(
            FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentTracerEnabled) ? serverSpan(app) : app
          )
          const newScope = Runtime.runSync(runtime)
          const onRequest = (source: Http.IncomingMessage, res: Http.ServerResponse) => {
            // HTTP/1.1 requires Host (RFC 9112, 3.2); refused in the envelope, as Node's parser errors are.
            if (source.headers.host === undefined && source.httpVersionMajor === 1 && source.httpVersionMinor === 1) {
              const requestId = requestIdFor(source.headers["x-request-id"] as string | undefined)
              const message = "The Host header is required"
              // Through the response (a pipelined request has no socket until those before it are
              // answered); Node leaves out the body of a HEAD answer itself.
              const { body, headers } = refusal(message, requestId)
              res.writeHead(400, headers).end(body)
              log(source.method ?? "-", 400, message, requestId)
              return
            }
            const request = new NodeRequest(source, res)
            // One copy of the app's context (every service of the app) with both added, not one copy per added service.
            const context = Context.merge(
              runtime.context,
              Context.make(HttpServerRequest.HttpServerRequest, request).pipe(
                Context.add(Scope.Scope, newScope(Scope.make()))
              )
            )
            const fiber = Runtime.runFork(
              Runtime.make({ context, runtimeFlags: runtime.runtimeFlags, fiberRefs: runtime.fiberRefs })
            )(handled)
            res.on("close", () => {
              if (!res.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
            })
          }
          yield* Effect.acquireRelease(
            Effect.sync(() => server.on("request", onRequest)),
            () => Effect.sync(() => server.off("request", onRequest))
          )
        })
    })
  })

/**
 * The server and the platform services NodeHttpServer.layer also provides (HttpPlatform, Etag,
 * NodeContext); with the fast path off, NodeHttpServer.layer on a server with the same timeouts.
 */
export const layer = (
  options: { readonly port: number; readonly host: string; readonly timeouts?: Timeouts | undefined }
) =>
  Layer.unwrapEffect(
    Effect.map(FastPath, (fast) =>
      fast
        ? Layer.merge(Layer.scoped(HttpServer.HttpServer, make(options)), NodeHttpServer.layerContext)
        : NodeHttpServer.layer(() => createServer(options.timeouts ?? DEFAULT_TIMEOUTS), {
          port: options.port,
          host: options.host
        }))
  )
