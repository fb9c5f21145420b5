/**
 * The console's bundle (apps/server/build.mjs) and its serving at /app (adapters/http/console.ts),
 * through the HTTP app in process. What the pages do in a browser: test/e2e/console.test.ts.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, statSync } from "node:fs"
import { resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"

const root = resolve(import.meta.dirname, "../..")
const build = () => execFileSync(process.execPath, ["apps/server/build.mjs"], { cwd: root, stdio: "inherit" })

type App = Awaited<ReturnType<typeof makeTestApp>>

describe("the console at /app", () => {
  let app: App
  beforeAll(async () => {
    build()
    app = await makeTestApp()
  })
  afterAll(() => app.close())

  const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]!)

  it("answers index.html for /app and every console path, never cached, with a same-origin-only policy", async () => {
    for (
      const path of [
        "/app",
        "/app/inbox",
        "/app/inbox/0d3c8f9e-6b1a-4f2e-8c7d-5a4b3c2d1e0f",
        "/app/developers/webhooks/x"
      ]
    ) {
      const res = await app.fetch(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(res.headers.get("cache-control")).toBe("no-cache")
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'")
      expect(res.headers.get("x-frame-options")).toBe("DENY")
      const html = await res.text()
      expect(html).toContain("<div id=\"root\">")
      // One script and one stylesheet, both from this origin: no CDN, no outside font.
      expect(assetsOf(html)).toHaveLength(2)
      expect(html).not.toMatch(/https?:\/\//)
    }
  })

  it("serves the hashed assets with their content types, cached for good; an unknown or malformed asset is a 404", async () => {
    const html = await (await app.fetch("/app")).text()
    const [script, styles] = [
      assetsOf(html).find((a) => a.endsWith(".js"))!,
      assetsOf(html).find((a) => a.endsWith(".css"))!
    ]
    const js = await app.fetch(script)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(js.headers.get("x-content-type-options")).toBe("nosniff")
    expect((await js.text()).length).toBeGreaterThan(1000)
    const css = await app.fetch(styles)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(await css.text()).toContain("--primary")
    for (const path of ["/app/assets/console-NOPE.js", "/app/assets/../../package.json", "/app/assets/x.html"]) {
      const res = await app.fetch(path)
      expect(res.status, path).toBe(404)
    }
  })

  it("is left out of the API document", async () => {
    const spec = await (await app.fetch("/v1/api/openapi.json")).json()
    expect(Object.keys(spec.paths).filter((p) => p === "/app" || p.startsWith("/app/*"))).toEqual([])
  })

  it("is rebuilt only when one of its sources changed", () => {
    const index = resolve(root, "dist/console/index.html")
    const before = statSync(index).mtimeMs
    build()
    expect(statSync(index).mtimeMs).toBe(before)
    const inputs = Object.keys(JSON.parse(readFileSync(resolve(root, "dist/console.inputs.json"), "utf8")))
    expect(inputs).toEqual(
      expect.arrayContaining(["apps/console/main.tsx", "apps/console/styles.css", "apps/console/index.html"])
    )
  })
})
