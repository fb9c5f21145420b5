/**
 * The deploy story the README tells: compose.yaml is a valid Compose file (checked against the
 * Compose Specification's own schema, vendored in compose-spec.json, since `docker compose config`
 * needs the Docker CLI's plugin; it runs too where that is installed), it runs the image beside a
 * Postgres it waits for, and it and .env.example name only variables the server reads
 * (apps/server/config.ts, asked through a recording ConfigProvider) or Compose itself uses. The
 * Dockerfile's HEALTHCHECK is run as Docker would run it, against a real server on its PORT.
 */
import Ajv from "ajv"
import { Effect, HashSet } from "effect"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as ConfigProviderPathPatch from "effect/ConfigProviderPathPatch"
import { execFile, execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { ServerConfig } from "../../apps/server/config.ts"
import { freePort, type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const root = resolve(import.meta.dirname, "../..")
const read = (path: string) => readFileSync(resolve(root, path), "utf8")
const tempDir = tempDirs("deploy")

const composeText = read("compose.yaml")
const compose = parse(composeText) as Record<string, any>
const service = compose["services"]["switchboard"]
const postgres = compose["services"]["postgres"]
const dockerfile = read("Dockerfile")

/** Every variable ServerConfig asks the environment for, whatever their values. */
const serverVariables = (): Set<string> => {
  const asked = new Set<string>()
  const provider = ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path) => {
        asked.add(path.join("_"))
        return Effect.fail(ConfigError.MissingData([...path], "recorded"))
      },
      enumerateChildren: () => Effect.succeed(HashSet.empty<string>()),
      patch: ConfigProviderPathPatch.empty
    })
  )
  Effect.runSync(Effect.withConfigProvider(Effect.either(ServerConfig), provider))
  return asked
}

/** `${NAME}`, `${NAME:-default}`, `${NAME:?message}` in the Compose file. */
const interpolated = new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!))

/** NAME=..., set or commented out, in .env.example. */
const exampleVariables = new Set(
  [...read(".env.example").matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!)
)

/** Compose's own: the Postgres image's password, interpolated into the server's DATABASE_URL. */
const COMPOSE_ONLY = new Set(["POSTGRES_PASSWORD"])

describe("compose.yaml", () => {
  const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false, validateSchema: false })
    .compile(JSON.parse(read("test/docs/compose-spec.json")))

  it("is valid under the Compose Specification's schema (which refuses what it does not know)", () => {
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ ...compose, services: { switchboard: { ...service, restart_policy: "always" } } })).toBe(false)
  })

  it("runs the image built here beside Postgres, once Postgres answers", () => {
    expect(service["build"]).toBe(".")
    expect(service["depends_on"]).toEqual({ postgres: { condition: "service_healthy" } })
    expect(postgres["healthcheck"]["test"].join(" ")).toMatch(/pg_isready -U switchboard -d switchboard/)
    const url = new URL(service["environment"]["DATABASE_URL"].replace(/\$\{[^}]*\}/, "secret"))
    const { POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD } = postgres["environment"]
    expect([url.protocol, url.hostname, url.username, url.pathname, url.password]).toEqual(
      ["postgres:", "postgres", POSTGRES_USER, `/${POSTGRES_DB}`, "secret"]
    )
    expect(service["environment"]["DATABASE_URL"]).toContain(POSTGRES_PASSWORD)
  })

  it("keeps the image's health check (GET /readyz on PORT) and its /data volume, and publishes PORT on loopback", () => {
    expect(service["healthcheck"]).toBeUndefined()
    expect(dockerfile).toMatch(/^ENV DATA_DIR=\/data /m)
    expect(service["volumes"]).toContain("switchboard-data:/data")
    expect(service["ports"]).toEqual(["127.0.0.1:${PORT:-8080}:${PORT:-8080}"])
  })

  it("names only variables the server reads, or Compose's own (declared in .env.example)", () => {
    const server = serverVariables()
    // The recorder sees the variables: a sample of each section of docs/configuration.md.
    for (const name of ["PORT", "DATABASE_URL", "TELNYX_API_KEY", "SMTP_URL", "TRUST_PROXY", "LOG_LEVEL"]) {
      expect(server).toContain(name)
    }
    const unknown = (names: Iterable<string>) => [...names].filter((n) => !server.has(n) && !COMPOSE_ONLY.has(n))
    expect(unknown(Object.keys(service["environment"]))).toEqual([])
    expect(unknown(interpolated)).toEqual([])
    expect(unknown(exampleVariables)).toEqual([])
    for (const name of COMPOSE_ONLY) expect(exampleVariables).toContain(name)
  })

  it("lists in .env.example only variables docs/configuration.md describes", () => {
    const documented = read("docs/configuration.md")
    const undocumented = [...exampleVariables].filter((n) => !COMPOSE_ONLY.has(n) && !documented.includes(`\`${n}\``))
    expect(undocumented).toEqual([])
  })

  it("keeps .env, which holds its secrets, out of the image and out of git", () => {
    expect(read(".dockerignore").split("\n")).toContain(".env")
    expect(read(".gitignore").split("\n")).toContain(".env")
  })

  // Only where the Docker CLI has its Compose plugin (not in CI): the engine is not needed.
  const dockerCompose = (() => {
    try {
      execFileSync("docker", ["compose", "version"], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  })()
  it.skipIf(!dockerCompose)("passes `docker compose config`", async () => {
    await promisify(execFile)("docker", ["compose", "config", "--quiet"], {
      cwd: root,
      env: { ...process.env, POSTGRES_PASSWORD: "test" }
    })
  })
})

describe("the Dockerfile's HEALTHCHECK", () => {
  /** Its exec form, as Docker runs it inside the container (no shell, the container's environment). */
  const command = (() => {
    const line = /^HEALTHCHECK [^\n]*?CMD (\[[^\n]*\])$/m.exec(dockerfile.replace(/\\\n\s*/g, ""))
    return JSON.parse(line![1]!) as Array<string>
  })()
  const check = (port: number) =>
    new Promise<number | null>((done) => {
      const [file, ...args] = command
      execFile(file === "node" ? process.execPath : file!, args, { env: { ...process.env, PORT: String(port) } })
        .once("exit", done)
    })

  let server: RunningServer
  beforeAll(async () => {
    server = await startServer("node", { DATA_DIR: tempDir() }, 150_000)
  }, 180_000)
  afterAll(() => server.stop())

  it("runs Node itself (node:20-slim has no curl)", () => {
    expect(command.slice(0, 2)).toEqual(["node", "-e"])
  })

  it("is healthy for a ready server on PORT, unhealthy where nothing listens", async () => {
    expect(await check(Number(new URL(server.baseUrl).port))).toBe(0)
    expect(await check(await freePort())).toBe(1)
  })

  it("asks /readyz: a server that answers 503 there is unhealthy", async () => {
    const paths: Array<string> = []
    const notReady = createServer((req, res) => {
      paths.push(req.url ?? "")
      res.writeHead(req.url === "/readyz" ? 503 : 200).end()
    })
    const port = await freePort()
    await new Promise<void>((done) => notReady.listen(port, "127.0.0.1", done))
    try {
      expect(await check(port)).toBe(1)
      expect(paths).toEqual(["/readyz"])
    } finally {
      await new Promise((done) => notReady.close(done))
    }
  })
})

describe("the license", () => {
  it("is MIT, in LICENSE and package.json", () => {
    expect(read("LICENSE")).toMatch(/^MIT License\n/)
    expect(JSON.parse(read("package.json"))["license"]).toBe("MIT")
  })
})
