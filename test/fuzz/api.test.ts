/**
 * Issue 15, deliverable 7: every operation of the served OpenAPI document, fuzzed over real sockets
 * against the real server process with a fixed seed and a bounded count (property.ts says what
 * every answer must be). `npm run fuzz` runs the same property longer with a random seed.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fuzzProperty, newStats, violations } from "./property.ts"
import type { FuzzRequest } from "./requests.ts"
import { startWorld, type World } from "./world.ts"

const SEED = 15
const RUNS = 3000

let world: World
beforeAll(async () => {
  world = await startWorld()
}, 120_000)
afterAll(() => world?.close())

describe("fuzzing every operation of /v1/api/openapi.json", () => {
  it(
    `answers ${RUNS} generated requests (seed ${SEED}) without a 5xx, with a documented status and shape, the envelope and request id, no accepted NUL or lone surrogate and only its own workspace's data`,
    async () => {
      const stats = newStats()
      const started = Date.now()
      try {
        await fc.assert(fuzzProperty(world, stats, "throw"), { seed: SEED, numRuns: RUNS })
      } finally {
        console.log(`fuzz: ${stats.requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`)
      }
      expect([...stats.operations].sort()).toEqual(world.document.operations.map((o) => o.id).sort())
    },
    300_000
  )

  it("fails on each kind of wrong answer (the property can fail)", () => {
    const op = world.document.operations.find((o) => o.method === "GET" && o.security.length > 0)!
    const req: FuzzRequest = {
      operation: op.id,
      method: op.method,
      target: op.path,
      headers: [["x-request-id", "mine"]],
      body: null,
      bodyEncoding: "utf8"
    }
    const envelope = (status: number, requestId: string, extra = "") => ({
      status,
      headers: { "x-request-id": requestId },
      body: JSON.stringify({ error: { code: "internal", message: `m${extra}`, requestId } })
    })
    const kinds = (res: Parameters<typeof violations>[2]) => violations(world, req, res).map((v) => v.kind).sort()
    expect(kinds(envelope(401, "mine"))).toEqual([])
    expect(kinds(envelope(500, "mine"))).toEqual(["5xx"])
    expect(kinds(envelope(418, "mine"))).toEqual(["undocumented status"])
    expect(kinds({ status: 400, headers: { "x-request-id": "mine" }, body: "Bad Request" })).toEqual(["no envelope"])
    expect(kinds({ status: 400, headers: {}, body: "" })).toEqual([
      "no envelope",
      "no request id",
      "request id mismatch"
    ])
    expect(kinds(envelope(401, "other"))).toEqual(["request id mismatch"])
    expect(kinds(envelope(401, "mine", world.foreign[0]))).toEqual(["cross-workspace data"])
    expect(kinds({ status: 200, headers: { "x-request-id": "mine" }, body: "not json" })).toEqual([
      "undocumented shape"
    ])
    const post = world.document.operations.find((o) => o.body !== undefined)!
    const created = (body: string) =>
      violations(world, {
        operation: post.id,
        method: post.method,
        target: post.path,
        headers: [],
        body,
        bodyEncoding: "utf8"
      }, { status: [...post.statuses].find((s) => s < 300)!, headers: { "x-request-id": "id" }, body: "{}" })
        .map((v) => v.kind)
        .filter((k) => k !== "undocumented shape")
    expect(created("{\"a\":\"\\u0000\"}")).toEqual(["accepted NUL or lone surrogate"])
    expect(created("{\"a\":[\"\\udc00\"]}")).toEqual(["accepted NUL or lone surrogate"])
    expect(created("{\"\\ud83d\\ude00\":\"\\ud83d\\ude00\"}")).toEqual([])
  })

  it("holds 2xx answers to their documented shape: the document's own examples fit, an empty object does not", () => {
    let checked = 0
    for (const op of world.document.operations) {
      for (const [status, schema] of op.answers) {
        if (status >= 300) continue
        const req: FuzzRequest = {
          operation: op.id,
          method: op.method,
          target: op.path,
          headers: [],
          body: null,
          bodyEncoding: "utf8"
        }
        const answer = (body: unknown) => ({ status, headers: { "x-request-id": "id" }, body: JSON.stringify(body) })
        for (const example of world.document.resolve(schema).examples ?? []) {
          expect(violations(world, req, answer(example)), `${op.id} ${status}`).toEqual([])
          checked++
        }
        if ((world.document.resolve(schema).required ?? []).length > 0) {
          expect(violations(world, req, answer({})).map((v) => v.kind), `${op.id} ${status}`).toEqual([
            "undocumented shape"
          ])
        }
      }
    }
    expect(checked).toBeGreaterThan(0)
  })
})
