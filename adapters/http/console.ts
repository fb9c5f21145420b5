/**
 * The web console's pages at `/app` (the app itself: apps/console, bundled into dist/console by
 * apps/server/build.mjs). `GET /app` and every path under it answer index.html, so the console's
 * own routes survive a reload; `/app/assets/<name>` answers a bundled script or stylesheet, named by
 * its content hash and so cached for good. The sign-in link's route (`/app/sign-in/<token>`,
 * api/app.ts) is more specific and wins. Not part of the API document.
 */
import {
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
import { Effect, Schema } from "effect"
import { readFile } from "node:fs/promises"
import type { Api } from "./api.ts"
import { group } from "./router.ts"

const Html = HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/html" })

export class ConsoleGroup extends HttpApiGroup.make("console")
  .add(HttpApiEndpoint.get("index", "/app").addSuccess(Html))
  .add(HttpApiEndpoint.get("page", "/app/*").addSuccess(Html))
  .annotate(OpenApi.Exclude, true)
{}

/**
 * Where the build put the console: beside the server bundle (dist/server.mjs runs from dist/), or
 * in dist/ seen from this source file (tsx, Deno).
 */
const places = [new URL("./console/", import.meta.url), new URL("../../dist/console/", import.meta.url)]

const read = (url: URL): Promise<Uint8Array | null> => readFile(url).catch(() => null)

/** index.html, read on each page load (it is small, and names the assets of the latest build). */
const indexHtml = async (): Promise<Uint8Array | null> => {
  for (const place of places) {
    const html = await read(new URL("index.html", place))
    if (html !== null) return html
  }
  return null
}

/** Assets by name: a name is its content's hash, so what was read once stays right. */
const assets = new Map<string, Uint8Array>()
const asset = async (name: string): Promise<Uint8Array | null> => {
  const cached = assets.get(name)
  if (cached !== undefined) return cached
  for (const place of places) {
    const bytes = await read(new URL(`assets/${name}`, place))
    if (bytes !== null) {
      assets.set(name, bytes)
      return bytes
    }
  }
  return null
}

const ASSET = /^\/app\/assets\/([A-Za-z0-9_-]+\.(js|css))$/
const contentTypes: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8"
}

/**
 * The page's own rules: scripts, styles and requests from this origin only (no inline script, no
 * outside asset); recordings and MMS images may come from the signed media URLs, which name the
 * public base URL and so another host behind a proxy.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob: https: http:",
  "media-src 'self' blob: https: http:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * The headers of one of our HTML pages (the console's, the API reference's): asked again on each
 * visit (it names the latest build's assets), held to its own policy, never framed or sniffed.
 */
export const pageHeaders = (csp: string) => ({
  "cache-control": "no-cache",
  "content-security-policy": csp,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin"
})

/** The headers of an asset whose URL changes with its content: cached for good. */
export const immutableHeaders = {
  "cache-control": "public, max-age=31536000, immutable",
  "x-content-type-options": "nosniff"
}

const text = (status: number, body: string) =>
  HttpServerResponse.text(body, { status, headers: { "cache-control": "no-store" } })

const page = Effect.promise(indexHtml).pipe(
  Effect.map((html) =>
    html === null
      ? text(503, "The console is not built: run `npm run build` (`npm start` builds it).")
      : HttpServerResponse.uint8Array(html, {
        contentType: "text/html; charset=utf-8",
        headers: pageHeaders(CSP)
      })
  )
)

const serve = Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
  const path = new URL(req.url, "http://console").pathname
  if (!path.startsWith("/app/assets/")) return page
  const m = ASSET.exec(path)
  if (m === null) return Effect.succeed(text(404, "No such console asset."))
  return Effect.map(
    Effect.promise(() => asset(m[1]!)),
    (bytes) =>
      bytes === null ? text(404, "No such console asset.") : HttpServerResponse.uint8Array(bytes, {
        contentType: contentTypes[m[2]!]!,
        headers: immutableHeaders
      })
  )
})

/** The handlers, given the app's Api (which adds ConsoleGroup, so importing it here would make a cycle). */
export const ConsoleLive = (api: typeof Api) =>
  group(api, "console", (handlers) => handlers.handle("index", () => page).handle("page", () => serve))
