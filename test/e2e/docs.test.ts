/**
 * Issue 44: the API reference page at `/docs`, Redoc rendering the live OpenAPI document, in a real
 * headless Chromium against the real server (Node, as `npm start` runs it). Every endpoint of
 * SPEC's Endpoints table appears in the rendered reference, and the page asks nothing of any
 * origin but the server's. On Deno the page and its script are served alike.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const chromiumPath = [process.env["CHROMIUM_PATH"], "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && existsSync(p)
)

/** SPEC's Endpoints table, as written there: paths under `/v1/api`, and MCP's outside it. */
const SPEC_ENDPOINTS = `
GET /contacts | POST /contacts | GET /contacts/{id} | PATCH /contacts/{id} | DELETE /contacts/{id}
GET /conversations | GET /conversations/{id} | PATCH /conversations/{id}
POST /messages | GET /messages/search | GET /calls | POST /calls
GET /numbers | GET /numbers/available | POST /numbers
POST /numbers/{e164}/connect | POST /numbers/{e164}/disconnect
GET /messaging | POST /messaging/registration | POST /messaging/refresh
POST /messaging/otp/verify | POST /messaging/otp/resend
GET /agent | PATCH /agent | POST /agent/publish
GET /webhook-events | GET /webhooks | POST /webhooks | GET /webhooks/{id} | PATCH /webhooks/{id}
DELETE /webhooks/{id} | POST /webhooks/{id}/rotate | POST /webhooks/{id}/test | GET /webhooks/{id}/deliveries
GET /openapi.json | POST /v1/mcp
`.split(/[|\n]/).map((s) => s.trim()).filter((s) => s !== "").map((line) => {
  const [method, path] = line.split(" ") as [string, string]
  return { method, path: path.startsWith("/v1/") ? path : `/v1/api${path}` }
})

const runs = chromiumPath !== undefined
if (!runs && process.env["CI"] === "true") {
  describe("the API reference in a browser", () => {
    it("needs Chromium under CI=true", () => {
      expect.fail("No Chromium at /usr/bin/chromium (or CHROMIUM_PATH): .ci/run installs Debian's chromium package")
    })
  })
}

describe.runIf(runs)("the API reference in a browser", () => {
  const tempDir = tempDirs("docs")
  let server: RunningServer
  let browser: Browser

  beforeAll(async () => {
    server = await startServer("node", { DATA_DIR: tempDir() })
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ["--no-sandbox"] })
  }, 180_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it("renders every SPEC endpoint from the live document, asking no other origin", { timeout: 180_000 }, async () => {
    expect(SPEC_ENDPOINTS).toHaveLength(36)
    const context = await browser.newContext({ baseURL: server.baseUrl })
    context.setDefaultTimeout(120_000)
    const page = await context.newPage()
    const origin = new URL(server.baseUrl).origin
    // Every request the page sends to the network passes here (one its policy refuses never leaves the browser).
    const sent: Array<string> = []
    await context.route("**/*", (route) => {
      sent.push(route.request().url())
      return route.continue()
    })

    const res = await page.goto("/docs")
    expect(res?.status()).toBe(200)
    // Redoc's title heading, then an operation section per operation.
    await page.getByRole("heading", { name: /Switchboard API/ }).waitFor()
    await page.waitForFunction(() => document.querySelectorAll("[data-section-id^='operation/']").length > 0)

    // Each operation's section shows its method and path together in its endpoint box ("get/v1/api/contacts").
    const rendered = await page.locator("[data-section-id^='operation/']").evaluateAll((sections) =>
      sections.map((section) => (section.textContent ?? "").replace(/\s+/g, ""))
    )
    const missing = SPEC_ENDPOINTS.filter(({ method, path }) =>
      !rendered.some((text) => text.includes(`${method.toLowerCase()}${path}`))
    ).map(({ method, path }) => `${method} ${path}`)
    expect(missing).toEqual([])

    // Redoc's sidebar asks for its logo on Redocly's CDN: the page's policy stops it in the browser.
    expect(sent.filter((url) => !url.startsWith(`${origin}/`))).toEqual([])
    expect(sent).toContain(`${origin}/v1/api/openapi.json`)
    expect(sent.some((url) => url.startsWith(`${origin}/docs/redoc-`))).toBe(true)
    await context.close()
  })

  it("serves the page with its policy and the script for good", { timeout: 60_000 }, async () => {
    const page = await fetch(`${server.baseUrl}/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    const csp = page.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toMatch(/https?:/)
    const html = await page.text()
    expect(html).not.toMatch(/https?:\/\//)
    const script = /<script src="([^"]+)"/.exec(html)?.[1]
    expect(script).toMatch(/^\/docs\/redoc-[\d.]+\.standalone\.js$/)
    const js = await fetch(`${server.baseUrl}${script}`)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/)
    expect(js.headers.get("cache-control")).toContain("immutable")
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    expect((await fetch(`${server.baseUrl}/docs/redoc-0.0.0.standalone.js`)).status).toBe(404)
  })
})
