/** LOG_FORMAT and LOG_LEVEL as apps/server/logging.ts applies them: what reaches stdout, in which shape. */
import {
  Cause,
  Console,
  Effect,
  Exit,
  FiberId,
  FiberRefs,
  HashMap,
  Layer,
  List,
  Logger,
  LogLevel,
  LogSpan,
  Redacted,
  Scope
} from "effect"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as Logging from "../../apps/server/logging.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** What the program writes to stdout under the server's logging layer, line by line. */
const written = (layer: Layer.Layer<never>, program: Effect.Effect<void>) => {
  const out: Array<string> = []
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((text) => (out.push(String(text)), true))
  try {
    Effect.runSync(Effect.provide(program, layer))
  } finally {
    spy.mockRestore()
  }
  return out.join("").split("\n").filter((l) => l !== "")
}

const request = Effect.logInfo("GET /healthz 200 0.2ms").pipe(Effect.annotateLogs({ route: "/healthz", status: 200 }))

describe("logging", () => {
  afterEach(() => vi.restoreAllMocks())

  it("json: one object a line with timestamp, level, message and annotations", () => {
    const [line, ...rest] = written(Logging.layer("json", "info"), request)
    expect(rest).toEqual([])
    const parsed = JSON.parse(line!)
    expect(parsed).toMatchObject({
      message: "GET /healthz 200 0.2ms",
      logLevel: "INFO",
      annotations: { route: "/healthz", status: 200 }
    })
    expect(Date.parse(parsed.timestamp)).not.toBeNaN()
  })

  it("json lines are Effect's jsonLogger's, character for character, plain or not", () => {
    const shared = { id: 1 }
    const options = (
      message: unknown,
      annotations: Record<string, unknown>,
      cause = Cause.empty as Cause.Cause<unknown>,
      extra: Partial<Logger.Logger.Options<unknown>> = {}
    ): Logger.Logger.Options<unknown> => ({
      fiberId: FiberId.make(7, 0),
      logLevel: LogLevel.Info,
      message,
      cause,
      context: FiberRefs.empty(),
      spans: List.empty(),
      annotations: HashMap.fromIterable(Object.entries(annotations)),
      date: new Date(0),
      ...extra
    })
    for (
      const o of [
        options("GET /v1/api/contacts/:id 200 1.2ms", {
          method: "GET",
          status: 200,
          durationMs: 1.2,
          keyId: null,
          odd: "\"quoted\"\n"
        }),
        options(["two", "parts"], { status: 500 }, Cause.fail(new Error("boom"))),
        options(new Error("an error as the message"), {}),
        options("objects", { twice: [shared, shared], secret: Redacted.make("hunter2"), big: 10n }),
        options(["one part"], { gone: undefined, none: null, nan: Number.NaN, yes: true }, Cause.empty, {
          spans: List.make(LogSpan.make("db", -5), LogSpan.make("request", -12)),
          date: new Date(1_700_000_000_000)
        }),
        options("no fiber, or two", {}, Cause.empty, { fiberId: FiberId.none }),
        options("two fibers", { n: 1 }, Cause.empty, {
          fiberId: FiberId.combine(FiberId.make(3, 0), FiberId.make(4, 0))
        }),
        options([], {}),
        options("a plain message with a cause", { n: 1 }, Cause.die("boom"))
      ]
    ) {
      expect(Logging.jsonLogger.log(o)).toBe(Logger.jsonLogger.log(o))
    }
  })

  it("Console.log (the first boot's banner) keeps its place after the lines logged before it", () => {
    for (const format of ["json", "logfmt"] as const) {
      const lines = written(Logging.layer(format, "info"), Effect.zipRight(request, Console.log("banner", 1)))
      expect(lines).toHaveLength(2)
      expect(lines[0]).toContain("GET /healthz 200 0.2ms")
      expect(lines[1]).toBe("banner 1")
    }
  })

  it("logfmt: one key=value line", () => {
    const lines = written(Logging.layer("logfmt", "info"), request)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^timestamp=\S+ level=INFO .*message="GET \/healthz 200 0.2ms"/)
    expect(lines[0]).toContain(" route=/healthz")
    expect(lines[0]).toContain(" status=200")
  })

  it("LOG_LEVEL keeps what is at least as severe, and none keeps nothing", () => {
    const all = Effect.all([Effect.logDebug("d"), Effect.logInfo("i"), Effect.logWarning("w"), Effect.logError("e")])
    const messages = (level: Logging.LogLevelName) =>
      written(Logging.layer("json", level), Effect.asVoid(all)).map((l) => JSON.parse(l).message)
    expect(messages("debug")).toEqual(["d", "i", "w", "e"])
    expect(messages("info")).toEqual(["i", "w", "e"])
    expect(messages("warning")).toEqual(["w", "e"])
    expect(messages("error")).toEqual(["e"])
    expect(messages("none")).toEqual([])
  })

  it("defaults to pretty on a terminal and json elsewhere, unless asked", () => {
    expect(Logging.formatFor(undefined, true)).toBe("pretty")
    expect(Logging.formatFor(undefined, false)).toBe("json")
    expect(Logging.formatFor("logfmt", true)).toBe("logfmt")
    expect(Logging.formatFor("pretty", false)).toBe("pretty")
  })

  it("a turn's lines leave in one write once the turn ends; what is pending when the logger closes is written then", async () => {
    const out: Array<string> = []
    const scope = Effect.runSync(Scope.make())
    const sink = Effect.runSync(Scope.extend(Logging.lineSink((text) => out.push(text)), scope))
    sink.write("a")
    sink.write("b")
    sink.write("c")
    expect(out).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(out).toEqual(["a\nb\nc\n"])
    sink.write("d")
    Effect.runSync(Scope.close(scope, Exit.void))
    expect(out).toEqual(["a\nb\nc\n", "d\n"])
    await new Promise((resolve) => setImmediate(resolve))
    expect(out).toHaveLength(2)
  })

  it("lines still pending when the process exits are written", () => {
    const script = `
      import { Effect } from "effect"
      import * as Logging from "./apps/server/logging.ts"
      Effect.runFork(Effect.provide(Effect.zipRight(Effect.logInfo("before exit"), Effect.sync(() => process.exit(3))), Logging.layer("json", "info")))`
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8"
    })
    expect(run.status).toBe(3)
    expect(run.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l).message)).toEqual(["before exit"])
  })
})
