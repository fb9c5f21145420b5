/**
 * Media adapters (CONTRACT.md "Media", research §4 API7 SSRF): the blob store contract run against
 * memory and the filesystem (round trip, workspace isolation, no path traversal, atomic writes),
 * the media fetcher against a local HTTP server (content type, filename, non-2xx, redirects not
 * followed, the 5 MB cap, the timeout, the real guard refusing loopback), signed media URLs under
 * TestClock, and the media route (`serveMedia` and the `MediaGroup` endpoint through HttpApi).
 */
import { HttpApi, HttpApiBuilder, HttpServer, HttpServerResponse, OpenApi } from "@effect/platform"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, TestClock } from "effect"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as FsBlobs from "../../adapters/blobs/filesystem.ts"
import * as MemoryBlobs from "../../adapters/blobs/memory.ts"
import { MediaGroup } from "../../adapters/http/api/media.ts"
import { serveMedia } from "../../adapters/http/handlers/media.ts"
import * as Fetcher from "../../adapters/media/fetcher.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as OutboundHttp from "../../adapters/net/http.ts"
import { HostResolver, layerOutboundGuard } from "../../core/egress/guard.ts"
import { InvalidArgument, NotFound } from "../../core/kernel/errors.ts"
import { BlobStore, MAX_MEDIA_BYTES, MediaFetcher, type MediaTooLarge, MediaUrls } from "../../core/media/model.ts"

const WS = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"
const OTHER_WS = "9d1f2a3b-0000-4000-8000-000000000001"
const bytesOf = (s: string) => new TextEncoder().encode(s)
const textOf = (b: Uint8Array) => new TextDecoder().decode(b)

// ------------------------------------------------------------------------------------ blob stores

let tempDir = ""
beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "switchboard-blobs-"))
})
afterAll(async () => {
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

const badNames = [
  "",
  ".",
  "..",
  "../x",
  "..%2Fx",
  ".hidden",
  "a/b",
  "a\\b",
  "/etc/passwd",
  "x\u0000y",
  "é",
  "a b",
  "x".repeat(201)
]

const blobContract = (name: string, store: () => Layer.Layer<BlobStore>) =>
  describe(`BlobStore contract: ${name}`, () => {
    const run = <A, E>(effect: Effect.Effect<A, E, BlobStore>) => Effect.provide(effect, store())

    it.effect("put then get round-trips bytes and content type; unknown keys are null", () =>
      run(
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          const data = new Uint8Array([0, 1, 2, 255, 254])
          yield* blobs.put(WS, "med_1.jpg", data, "image/jpeg")
          const got = yield* blobs.get(WS, "med_1.jpg")
          assert.isNotNull(got)
          assert.deepStrictEqual(Array.from(got!.bytes), [0, 1, 2, 255, 254])
          assert.strictEqual(got!.contentType, "image/jpeg")
          assert.isNull(yield* blobs.get(WS, "med_2"))
          assert.isNull(yield* blobs.get("unknown-ws", "med_1.jpg"))
          // Stored bytes are not aliased with the caller's buffer.
          data[0] = 99
          got!.bytes[1] = 99
          assert.deepStrictEqual(Array.from((yield* blobs.get(WS, "med_1.jpg"))!.bytes), [0, 1, 2, 255, 254])
        })
      ))

    it.effect("an empty blob and an overwrite", () =>
      run(
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          yield* blobs.put(WS, "empty", new Uint8Array(0), "text/plain")
          assert.strictEqual((yield* blobs.get(WS, "empty"))!.bytes.byteLength, 0)
          yield* blobs.put(WS, "empty", bytesOf("now full"), "text/plain; charset=utf-8")
          const got = yield* blobs.get(WS, "empty")
          assert.strictEqual(textOf(got!.bytes), "now full")
          assert.strictEqual(got!.contentType, "text/plain; charset=utf-8")
        })
      ))

    it.effect("workspaces are isolated", () =>
      run(
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          yield* blobs.put(WS, "shared-key", bytesOf("mine"), "text/plain")
          assert.isNull(yield* blobs.get(OTHER_WS, "shared-key"))
          yield* blobs.put(OTHER_WS, "shared-key", bytesOf("theirs"), "text/plain")
          assert.strictEqual(textOf((yield* blobs.get(WS, "shared-key"))!.bytes), "mine")
          assert.strictEqual(textOf((yield* blobs.get(OTHER_WS, "shared-key"))!.bytes), "theirs")
        })
      ))

    it.effect("traversal and malformed names: put dies, get is null", () =>
      run(
        Effect.gen(function*() {
          const blobs = yield* BlobStore
          yield* blobs.put(WS, "target", bytesOf("secret"), "text/plain")
          for (const bad of badNames) {
            const asKey = yield* Effect.exit(blobs.put(WS, bad, bytesOf("x"), "text/plain"))
            assert.isTrue(
              Exit.isFailure(asKey) && Exit.isInterrupted(asKey) === false,
              `put key ${JSON.stringify(bad)}`
            )
            const asWs = yield* Effect.exit(blobs.put(bad, "k", bytesOf("x"), "text/plain"))
            assert.isTrue(Exit.isFailure(asWs), `put workspace ${JSON.stringify(bad)}`)
            assert.isNull(yield* blobs.get(WS, bad))
            assert.isNull(yield* blobs.get(bad, "target"))
          }
          assert.isNull(yield* blobs.get(`${WS}/..`, `${WS}/target`))
          assert.isNull(yield* blobs.get("..", `${WS}/target`))
          assert.isNull(yield* blobs.get(WS, ".target.type"))
          // Dots inside names are fine.
          yield* blobs.put("ws.1", "a..b.tar.gz", bytesOf("ok"), "application/gzip")
          assert.strictEqual(textOf((yield* blobs.get("ws.1", "a..b.tar.gz"))!.bytes), "ok")
        })
      ))
  })

blobContract("memory", () => MemoryBlobs.layer)
blobContract("filesystem", () => FsBlobs.layer(join(tempDir, `store-${crypto.randomUUID()}`)))

describe("filesystem BlobStore", () => {
  it.effect("a traversal put dies as a defect with nothing written", () =>
    Effect.gen(function*() {
      const dir = join(tempDir, "traversal")
      const blobs = FsBlobs.make(dir)
      const exit = yield* Effect.exit(blobs.put("..", "escaped", bytesOf("x"), "text/plain"))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.isTrue(exit.cause._tag === "Die")
      const exit2 = yield* Effect.exit(blobs.put(WS, "../../escaped", bytesOf("x"), "text/plain"))
      assert.isTrue(Exit.isFailure(exit2))
      const listed = yield* Effect.promise(() => readdir(tempDir))
      assert.notInclude(listed, "escaped")
    }))

  it.effect("lays out <dir>/<workspaceId>/<key> with a dot sidecar and leaves no temp files", () =>
    Effect.gen(function*() {
      const dir = join(tempDir, "layout")
      const blobs = FsBlobs.make(dir)
      yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => blobs.put(WS, `k${i % 4}`, bytesOf(`v${i}`), "image/png")),
        { concurrency: "unbounded" }
      )
      yield* blobs.put(WS, "photo.png", bytesOf("PNG"), "image/png")
      const raw = yield* Effect.promise(() => readFile(join(dir, WS, "photo.png"), "utf8"))
      assert.strictEqual(raw, "PNG")
      const files = (yield* Effect.promise(() => readdir(join(dir, WS)))).sort()
      assert.deepStrictEqual(files, [
        ".k0.type",
        ".k1.type",
        ".k2.type",
        ".k3.type",
        ".photo.png.type",
        "k0",
        "k1",
        "k2",
        "k3",
        "photo.png"
      ])
      // A fresh store over the same directory sees the blob (durable, not cached).
      const again = yield* FsBlobs.make(dir).get(WS, "photo.png")
      assert.strictEqual(again!.contentType, "image/png")
    }))
})

// ------------------------------------------------------------------------------------ fetcher

interface Served {
  path: string
  hits: number
  bytesWritten: number
  closedEarly: boolean
}

let server: Server
let origin = ""
const log: Array<Served> = []
const BIG_CHUNK = new Uint8Array(64 * 1024).fill(65)

const routes: Record<string, (req: IncomingMessage, res: ServerResponse, entry: Served) => void> = {
  "/media/cat%20photo.JPG": (_req, res) => {
    res.writeHead(200, { "content-type": "Image/JPEG" })
    res.end(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))
  },
  "/plain": (_req, res) => {
    res.writeHead(200)
    res.end("no type")
  },
  "/": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end("root")
  },
  "/missing": (_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" })
    res.end("not here")
  },
  "/moved": (_req, res) => {
    res.writeHead(302, { location: "/target" })
    res.end()
  },
  "/target": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.end("redirect target")
  },
  "/exact": (_req, res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" })
    res.end(Buffer.alloc(MAX_MEDIA_BYTES, 1))
  },
  "/declared-huge": (_req, res) => {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(50 * 1024 * 1024) })
    res.write(BIG_CHUNK)
    // Never finishes on its own; the client must give up.
  },
  "/endless": (_req, res, entry) => {
    // Chunked, no length: streams until the client hangs up (or 100 MB, as a backstop).
    res.writeHead(200, { "content-type": "video/mp4" })
    const pump = () => {
      while (!res.destroyed && entry.bytesWritten < 100 * 1024 * 1024) {
        entry.bytesWritten += BIG_CHUNK.byteLength
        if (!res.write(BIG_CHUNK)) return void res.once("drain", pump)
      }
      if (!res.destroyed) res.end()
    }
    pump()
  },
  "/slow": (_req, res) => {
    const timer = setTimeout(() => {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("late")
    }, 3000)
    res.on("close", () => clearTimeout(timer))
  },
  "/slow-body": (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" })
    res.write("start")
    const timer = setTimeout(() => res.end("end"), 3000)
    res.on("close", () => clearTimeout(timer))
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!
    const entry: Served = { path, hits: 1, bytesWritten: 0, closedEarly: false }
    log.push(entry)
    res.on("close", () => {
      if (!res.writableFinished) entry.closedEarly = true
    })
    const route = routes[path]
    if (route) route(req, res, entry)
    else {
      res.writeHead(500)
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const noDns = Layer.succeed(HostResolver, HostResolver.of({ resolve: () => Effect.fail("ENOTFOUND") }))
const localResolver = Layer.succeed(
  HostResolver,
  HostResolver.of({
    resolve: (host) => (host === "media.internal.test" ? Effect.succeed(["127.0.0.1"]) : Effect.fail("ENOTFOUND"))
  })
)
/** allowPrivate: plain http to 127.0.0.1 passes the guard, as in local development. */
const devFetcher = (options: Fetcher.FetcherOptions = {}) =>
  Fetcher.layerWith(options).pipe(
    Layer.provide(layerOutboundGuard(true)),
    Layer.provide(noDns),
    Layer.provide(OutboundHttp.layer(true))
  )

const fetchWith = (url: string, options: Fetcher.FetcherOptions = {}) =>
  Effect.flatMap(MediaFetcher, (f) => f.fetch(url)).pipe(Effect.provide(devFetcher(options)))

/** The failure's message; it must be an InvalidArgument, or MediaTooLarge past the cap. */
const failureOf = <A>(
  effect: Effect.Effect<A, InvalidArgument | MediaTooLarge>,
  expected: "InvalidArgument" | "MediaTooLarge" = "InvalidArgument"
) =>
  Effect.map(Effect.flip(effect), (e) => {
    assert.strictEqual(e._tag, expected)
    return e.message
  })

describe("MediaFetcher", () => {
  it.live("fetches bytes with the content type (lower-cased) and a sanitised filename", () =>
    Effect.gen(function*() {
      const got = yield* fetchWith(`${origin}/media/cat%20photo.JPG?sig=abc`)
      assert.deepStrictEqual(Array.from(got.bytes), [0xff, 0xd8, 0xff, 0xe0])
      assert.strictEqual(got.contentType, "image/jpeg")
      assert.strictEqual(got.filename, "cat_photo.JPG")
      const plain = yield* fetchWith(`${origin}/plain`)
      assert.strictEqual(plain.contentType, "application/octet-stream")
      assert.strictEqual(plain.filename, "plain")
      const root = yield* fetchWith(`${origin}/`)
      assert.strictEqual(root.filename, "media")
    }))

  it.live("exactly MAX_MEDIA_BYTES is accepted", () =>
    Effect.gen(function*() {
      const got = yield* fetchWith(`${origin}/exact`)
      assert.strictEqual(got.bytes.byteLength, MAX_MEDIA_BYTES)
    }))

  it.live("a 404 is an InvalidArgument naming the URL and the status", () =>
    Effect.gen(function*() {
      const url = `${origin}/missing`
      const message = yield* failureOf(fetchWith(url))
      assert.include(message, url)
      assert.include(message, "404")
    }))

  it.live("a 302 is a failure and the redirect is not followed", () =>
    Effect.gen(function*() {
      const before = log.filter((e) => e.path === "/target").length
      const message = yield* failureOf(fetchWith(`${origin}/moved`))
      assert.include(message, `${origin}/moved`)
      assert.include(message, "redirect")
      assert.include(message, "302")
      assert.strictEqual(log.filter((e) => e.path === "/target").length, before)
    }))

  it.live("a body over 5 MB fails without being read to the end", () =>
    Effect.gen(function*() {
      const message = yield* failureOf(fetchWith(`${origin}/endless`), "MediaTooLarge")
      assert.include(message, `${origin}/endless`)
      assert.include(message, "larger than 5 MB")
      // Give the server a moment to notice the hang-up.
      yield* Effect.sleep("200 millis")
      const entry = log.filter((e) => e.path === "/endless").at(-1)!
      assert.isTrue(entry.closedEarly)
      assert.isBelow(entry.bytesWritten, 30 * 1024 * 1024)
    }))

  it.live("a declared Content-Length over the cap fails at once", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const message = yield* failureOf(fetchWith(`${origin}/declared-huge`), "MediaTooLarge")
      assert.include(message, "larger than 5 MB")
      assert.isBelow(Date.now() - started, 2000)
    }))

  it.live("a slow server fails after the timeout (headers or body)", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const message = yield* failureOf(fetchWith(`${origin}/slow`, { timeoutMs: 200 }))
      assert.include(message, `${origin}/slow`)
      assert.include(message, "within 0.2 s")
      const slowBody = yield* failureOf(fetchWith(`${origin}/slow-body`, { timeoutMs: 200 }))
      assert.include(slowBody, "within 0.2 s")
      assert.isBelow(Date.now() - started, 2500)
    }))

  it.live("a connection failure names the URL", () =>
    Effect.gen(function*() {
      const message = yield* failureOf(fetchWith("http://127.0.0.1:1/x.png"))
      assert.include(message, "http://127.0.0.1:1/x.png")
      assert.include(message, "could not be fetched")
    }))

  it.live("the URL in a failure has its control characters escaped, so it cannot forge a log line", () =>
    Effect.gen(function*() {
      const message = yield* failureOf(fetchWith(`${origin}/missing?q=a\nlevel=ERROR message=forged\u2028x`))
      assert.include(message, "/missing?q=a\\u000alevel=ERROR message=forged\\u2028x")
      assert.notMatch(message, /[\n\u2028]/)
      assert.include(message, "404")
    }))

  it.live("a very long URL is truncated in the message", () =>
    Effect.gen(function*() {
      const url = `${origin}/missing?${"q".repeat(5000)}`
      const message = yield* failureOf(fetchWith(url))
      assert.isBelow(message.length, 400)
    }))

  it.live("the real guard (allowPrivate=false) refuses loopback, http and private DNS answers before any request", () =>
    Effect.gen(function*() {
      const before = log.length
      const fetcher = Fetcher.layer.pipe(
        Layer.provide(layerOutboundGuard(false)),
        Layer.provide(localResolver),
        Layer.provide(OutboundHttp.layer(false))
      )
      const strict = (url: string) =>
        failureOf(Effect.flatMap(MediaFetcher, (f) => f.fetch(url)).pipe(Effect.provide(fetcher)))
      const literal = yield* strict("https://127.0.0.1/cat.jpg")
      assert.include(literal, "https://127.0.0.1/cat.jpg")
      assert.include(literal, "loopback")
      assert.include(yield* strict(`${origin}/plain`), "https")
      assert.include(yield* strict("https://media.internal.test/a.png"), "loopback")
      assert.include(yield* strict("https://[::ffff:127.0.0.1]/a.png"), "IPv4-mapped")
      assert.include(yield* strict("https://169.254.169.254/latest/meta-data"), "linkLocal")
      assert.include(yield* strict("not a url"), "not a valid absolute URL")
      assert.strictEqual(log.length, before)
    }))

  it.live("a host that answers the guard with a public address and the connection with a private one is not dialled (DNS rebinding)", () =>
    Effect.gen(function*() {
      const before = log.length
      const port = new URL(origin).port
      const publicToTheGuard = Layer.succeed(
        HostResolver,
        HostResolver.of({
          resolve: (host) => (host === "rebind.test" ? Effect.succeed(["93.184.216.34"]) : Effect.fail("ENOTFOUND"))
        })
      )
      const loopbackToTheConnection: OutboundHttp.Lookup = (_host, _options, callback) =>
        callback(null, [{ address: "127.0.0.1", family: 4 }])
      const fetcher = Fetcher.layer.pipe(
        Layer.provide(layerOutboundGuard(false)),
        Layer.provide(publicToTheGuard),
        Layer.provide(OutboundHttp.layer(false, loopbackToTheConnection))
      )
      const message = yield* failureOf(
        Effect.flatMap(MediaFetcher, (f) => f.fetch(`https://rebind.test:${port}/media/cat.jpg`)).pipe(
          Effect.provide(fetcher)
        )
      )
      assert.include(message, "rebind.test resolves to a loopback address (127.0.0.1)")
      assert.strictEqual(log.length, before)
    }))

  it("filenameOf and contentTypeOf sanitise", () => {
    assert.strictEqual(Fetcher.filenameOf(new URL("https://x.test/a/..%2F..%2Fetc%2Fpasswd")), "etc_passwd")
    assert.strictEqual(Fetcher.filenameOf(new URL("https://x.test/a/.htaccess")), "htaccess")
    assert.strictEqual(Fetcher.filenameOf(new URL("https://x.test/a/%E0%A4%A")), "E0_A4_A")
    assert.strictEqual(Fetcher.filenameOf(new URL(`https://x.test/${"a".repeat(300)}.png`)).length, 100)
    assert.strictEqual(Fetcher.contentTypeOf("image/png"), "image/png")
    assert.strictEqual(Fetcher.contentTypeOf("text/html\r\nx-evil: 1"), "application/octet-stream")
    assert.strictEqual(Fetcher.contentTypeOf("garbage"), "application/octet-stream")
    assert.strictEqual(Fetcher.contentTypeOf(null), "application/octet-stream")
  })
})

// ------------------------------------------------------------------------------------ signed URLs

const SECRET = new Uint8Array(32).fill(7)
const BASE = "https://api.example.com/"
const urlsLayer = SignedUrls.layer({ baseUrl: BASE, secret: SECRET })

const parts = (signed: string) => {
  const u = new URL(signed)
  const [, v1, media, workspaceId, key] = u.pathname.split("/")
  assert.strictEqual(`${v1}/${media}`, "v1/media")
  return {
    workspaceId: workspaceId!,
    key: key!,
    expires: u.searchParams.get("expires")!,
    signature: u.searchParams.get("signature")!
  }
}

describe("signed media URLs", () => {
  it.effect("sign then verify; the URL shape; expiry one hour after the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_767_225_600_000) // 2026-01-01T00:00:00Z
      const urls = yield* MediaUrls
      const signed = yield* urls.sign(WS, "med_abc.jpg")
      assert.match(
        signed,
        new RegExp(
          `^https://api\\.example\\.com/v1/media/${WS}/med_abc\\.jpg\\?expires=1767229200&signature=[A-Za-z0-9_-]{43}$`
        )
      )
      const p = parts(signed)
      assert.isTrue(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature))
    }).pipe(Effect.provide(urlsLayer)))

  it.effect("tampering with workspace, key, expires or signature fails", () =>
    Effect.gen(function*() {
      const urls = yield* MediaUrls
      const p = parts(yield* urls.sign(WS, "med_abc.jpg"))
      const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1)
      assert.isFalse(yield* urls.verify(OTHER_WS, p.key, p.expires, p.signature))
      assert.isFalse(yield* urls.verify(p.workspaceId, "med_abd.jpg", p.expires, p.signature))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, String(Number(p.expires) + 1), p.signature))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, flip(p.signature)))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature.slice(0, -1)))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, `${p.signature}=`))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, ""))
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, `${p.expires}.0`, p.signature))
      assert.isFalse(yield* urls.verify(`${p.workspaceId}/x`, p.key, p.expires, p.signature))
      // The same names under another secret do not verify.
      const other = yield* SignedUrls.make({ baseUrl: BASE, secret: new Uint8Array(32).fill(8) })
      assert.isFalse(yield* other.verify(p.workspaceId, p.key, p.expires, p.signature))
      assert.isTrue(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature))
    }).pipe(Effect.provide(urlsLayer)))

  it.effect("a URL expires after MEDIA_URL_TTL_SECONDS", () =>
    Effect.gen(function*() {
      const urls = yield* MediaUrls
      const p = parts(yield* urls.sign(WS, "med_abc.jpg"))
      yield* TestClock.adjust("3599 seconds")
      assert.isTrue(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature))
      yield* TestClock.adjust("1 seconds")
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature))
      yield* TestClock.adjust("1 hours")
      assert.isFalse(yield* urls.verify(p.workspaceId, p.key, p.expires, p.signature))
    }).pipe(Effect.provide(urlsLayer)))

  it.effect("a short secret and invalid names are defects", () =>
    Effect.gen(function*() {
      const short = yield* Effect.exit(SignedUrls.make({ baseUrl: BASE, secret: new Uint8Array(8) }))
      assert.isTrue(Exit.isFailure(short))
      const urls = yield* MediaUrls
      assert.isTrue(Exit.isFailure(yield* Effect.exit(urls.sign(WS, "../x"))))
    }).pipe(Effect.provide(urlsLayer)))
})

// ------------------------------------------------------------------------------------ media route

const routeLayer = Layer.merge(urlsLayer, MemoryBlobs.layer)

const seeded = Effect.gen(function*() {
  const blobs = yield* BlobStore
  yield* blobs.put(WS, "med_1.png", bytesOf("PNGDATA"), "image/png")
  const urls = yield* MediaUrls
  return parts(yield* urls.sign(WS, "med_1.png"))
})

describe("serveMedia", () => {
  it.effect("a good URL serves the bytes with the content type and safe headers", () =>
    Effect.gen(function*() {
      const p = yield* seeded
      const res = yield* serveMedia({ workspaceId: p.workspaceId, key: p.key }, {
        expires: p.expires,
        signature: p.signature
      })
      const web = HttpServerResponse.toWeb(res)
      assert.strictEqual(web.status, 200)
      assert.strictEqual(web.headers.get("content-type"), "image/png")
      assert.strictEqual(web.headers.get("x-content-type-options"), "nosniff")
      assert.strictEqual(web.headers.get("cache-control"), "private, max-age=3600")
      assert.strictEqual(web.headers.get("content-disposition"), "inline")
      assert.strictEqual(textOf(new Uint8Array(yield* Effect.promise(() => web.arrayBuffer()))), "PNGDATA")
    }).pipe(Effect.provide(routeLayer)))

  it.effect("bad signature, expired, missing blob and missing params are the same NotFound", () =>
    Effect.gen(function*() {
      const p = yield* seeded
      const urls = yield* MediaUrls
      const ghost = parts(yield* urls.sign(WS, "med_ghost.png"))
      const attempts = [
        serveMedia({ workspaceId: p.workspaceId, key: p.key }, { expires: p.expires, signature: ghost.signature }),
        serveMedia({ workspaceId: OTHER_WS, key: p.key }, { expires: p.expires, signature: p.signature }),
        serveMedia({ workspaceId: ghost.workspaceId, key: ghost.key }, {
          expires: ghost.expires,
          signature: ghost.signature
        }),
        serveMedia({ workspaceId: p.workspaceId, key: p.key }, {}),
        serveMedia({ workspaceId: "..", key: p.key }, { expires: p.expires, signature: p.signature })
      ]
      const messages = new Set<string>()
      for (const attempt of attempts) {
        const e = yield* Effect.flip(attempt)
        assert.instanceOf(e, NotFound)
        messages.add(e.message)
      }
      yield* TestClock.adjust("3601 seconds")
      const expired = yield* Effect.flip(
        serveMedia({ workspaceId: p.workspaceId, key: p.key }, { expires: p.expires, signature: p.signature })
      )
      assert.instanceOf(expired, NotFound)
      messages.add(expired.message)
      assert.strictEqual(messages.size, 1)
    }).pipe(Effect.provide(routeLayer)))
})

describe("MediaGroup", () => {
  class TestApi extends HttpApi.make("media-test").add(MediaGroup) {}
  const MediaLive = HttpApiBuilder.group(
    TestApi,
    "media",
    (handlers) => handlers.handle("get", ({ path, urlParams }) => serveMedia(path, urlParams))
  )

  it("documents a binary 200 and a 404 (an incomplete link too), with no security and optional string parameters", () => {
    const spec = OpenApi.fromApi(TestApi)
    const op = spec.paths["/v1/media/{workspaceId}/{key}"]?.get
    assert.isDefined(op)
    assert.deepStrictEqual(op!.security, [])
    // HttpApi lists its decode error (400) on every endpoint; this one's parameters never fail to decode.
    assert.deepStrictEqual(Object.keys(op!.responses).sort(), ["200", "400", "404"])
    assert.deepStrictEqual(op!.responses[200]!.content as unknown, {
      "application/octet-stream": {
        schema: { type: "string", format: "binary", description: "The media bytes, with their original content type." }
      }
    })
    assert.deepStrictEqual(op!.parameters.map((p) => `${p.in}:${p.name}:${p.required}`).sort(), [
      "path:key:true",
      "path:workspaceId:true",
      "query:expires:false",
      "query:signature:false"
    ])
    for (const p of op!.parameters.filter((p) => p.in === "query")) {
      const { type, description } = p.schema as { type?: string; description?: string }
      assert.strictEqual(type, "string", p.name)
      assert.isString(description, p.name)
    }
  })

  it.live("serves through HttpApiBuilder", () => {
    // One store instance shared by the test (seeding) and the web handler's own runtime.
    const shared = Layer.merge(urlsLayer, Layer.succeed(BlobStore, MemoryBlobs.make()))
    return Effect.gen(function*() {
      const p = yield* seeded
      const { handler, dispose } = HttpApiBuilder.toWebHandler(
        Layer.mergeAll(HttpApiBuilder.api(TestApi).pipe(Layer.provide(MediaLive)), HttpServer.layerContext).pipe(
          Layer.provide(shared)
        )
      )
      try {
        const good = yield* Effect.promise(() =>
          handler(
            new Request(
              `http://localhost/v1/media/${p.workspaceId}/${p.key}?expires=${p.expires}&signature=${p.signature}`
            )
          )
        )
        assert.strictEqual(good.status, 200)
        assert.strictEqual(good.headers.get("content-type"), "image/png")
        assert.strictEqual(yield* Effect.promise(() => good.text()), "PNGDATA")
        const bad = yield* Effect.promise(() =>
          handler(
            new Request(
              `http://localhost/v1/media/${p.workspaceId}/${p.key}?expires=${p.expires}&signature=${"A".repeat(43)}`
            )
          )
        )
        assert.strictEqual(bad.status, 404)
      } finally {
        yield* Effect.promise(() => dispose())
      }
    }).pipe(Effect.provide(shared))
  })
})
