/**
 * The handlers of api/reference.ts. The document is built on its first request and kept (it only
 * changes with the code). The page is Redoc's standalone bundle (the `redoc` package, a production
 * dependency) served from this origin, read from node_modules where Node's resolution finds it from
 * here: beside the sources (tsx, Deno) and beside dist/server.mjs alike. Its URL names Redoc's
 * version, so browsers cache it for good. Nothing is fetched from another origin: the page's policy
 * allows this origin only (Redoc's sidebar logo, an image on its CDN, is refused and hidden).
 */
import { HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
// Renamed: the server bundle's banner declares `createRequire` (apps/server/build.mjs).
import { createRequire as requireFrom } from "node:module"
import { dirname, join } from "node:path"
import { Api } from "../api.ts"
import { DOCS_PATH, OPENAPI_PATH } from "../api/reference.ts"
import { immutableHeaders, pageHeaders } from "../console.ts"
import { group } from "../router.ts"

let document: HttpServerResponse.HttpServerResponse | undefined
const openApi = Effect.sync(() => (document ??= HttpServerResponse.unsafeJson(OpenApi.fromApi(Api))))

/** Redoc's package folder and version, found on the first page load. */
let redoc: { readonly dir: string; readonly script: string } | undefined
const redocPackage = () => {
  if (redoc === undefined) {
    const require = requireFrom(import.meta.url)
    const manifest = require.resolve("redoc/package.json")
    const { version } = require(manifest) as { readonly version: string }
    redoc = { dir: dirname(manifest), script: `redoc-${version}.standalone.js` }
  }
  return redoc
}

/**
 * Redoc renders with styled-components (inline styles) and searches in a worker it starts from a
 * blob; everything else it needs comes from this origin. No inline script: the bundle starts itself
 * on the `<redoc spec-url>` element.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const page = (script: string) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard API reference</title>
</head>
<body>
<redoc spec-url="${OPENAPI_PATH}" required-props-first="true" expand-responses="200,201"></redoc>
<script src="${DOCS_PATH}/${script}"></script>
</body>
</html>
`

const notFound = () =>
  HttpServerResponse.text("No such page.", { status: 404, headers: { "cache-control": "no-store" } })

export const ReferenceLive = group(Api, "reference", (handlers) =>
  handlers
    .handle("openapi", () => openApi)
    .handle("page", () =>
      Effect.sync(() =>
        HttpServerResponse.text(page(redocPackage().script), {
          contentType: "text/html; charset=utf-8",
          headers: pageHeaders(CSP)
        })
      ))
    .handle("script", ({ path }) => {
      const { dir, script } = redocPackage()
      if (path.name !== script) return Effect.succeed(notFound())
      return Effect.map(
        Effect.promise(() => readFile(join(dir, "bundles/redoc.standalone.js"))),
        (bytes) =>
          HttpServerResponse.uint8Array(bytes, {
            contentType: "text/javascript; charset=utf-8",
            headers: immutableHeaders
          })
      )
    }))
