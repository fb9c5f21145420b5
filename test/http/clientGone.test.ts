/**
 * A client that hangs up before its answer is no server error: the request is logged and counted as
 * 499 (client closed request), never as a 500, and nothing is logged at error level.
 */
import { Effect, Layer, Logger, LogLevel } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NumberInventory } from "../../core/numbers/inventory.ts"
import { makeTestApp } from "../support/app.ts"
import { bearer } from "./helpers.ts"

const lines: Array<{ level: string; message: unknown }> = []
const recorder = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel.label, message: Array.isArray(message) ? message[0] : message })
  })
)

let entered!: () => void
const searching = new Promise<void>((resolve) => (entered = resolve))
/** A carrier inventory that never answers a search: the client gives up first. */
const hanging = Layer.succeed(
  NumberInventory,
  NumberInventory.of({
    search: () => Effect.zipRight(Effect.sync(() => entered()), Effect.never),
    order: () => Effect.never
  })
)

let app: Awaited<ReturnType<typeof makeTestApp>>
beforeAll(async () => {
  app = await makeTestApp({ logger: Layer.merge(recorder, Logger.minimumLogLevel(LogLevel.Info)), inventory: hanging })
})
afterAll(() => app.close())

describe("a client that goes away", () => {
  it("is logged and counted as 499, not 500, with no error logged", async () => {
    const { key } = await app.createWorkspace("Gone")
    lines.length = 0
    const client = new AbortController()
    const answer = app.fetch("/v1/api/numbers/available?startsWith=415", {
      headers: bearer(key),
      signal: client.signal
    }).catch((e: unknown) => e)
    await searching
    client.abort()
    await answer
    await expect.poll(
      () => lines.map((l) => String(l.message)).find((m) => m.startsWith("GET /v1/api/numbers/available")),
      { timeout: 10_000 }
    ).toMatch(
      /^GET \/v1\/api\/numbers\/available 499 [\d.]+ms$/
    )
    expect(lines.filter((l) => l.level === "ERROR")).toEqual([])
    const metrics = await (await app.fetch("/metrics")).text()
    expect(metrics).not.toMatch(/status="500"/)
  })
})
