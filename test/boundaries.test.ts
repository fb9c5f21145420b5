/**
 * The dependency rule `apps -> adapters -> core`, checked on every source file's import specifiers:
 *
 * - core/ imports the packages in CORE_PACKAGES (pure, runtime-neutral) and files inside core/: no
 *   `node:*`, no drivers, no `@effect/platform*` or `@effect/sql*`, nothing under adapters/ or apps/.
 * - adapters/ never import apps/. An adapter folder imports its own folder, core/, the shared adapter
 *   infrastructure in adapters/net/, and another adapter folder only along an edge of ADAPTER_EDGES.
 *
 * The folder rules are general: new files in an existing folder need no change here.
 */
import { readdirSync, readFileSync } from "node:fs"
import { posix } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

/** Pure libraries core may use: they touch no I/O and run unchanged on Node, Deno and in a browser. */
const CORE_PACKAGES: ReadonlySet<string> = new Set(["effect", "libphonenumber-js", "ipaddr.js"])

/** The adapter folder every adapter may import: infrastructure several adapters share. */
const SHARED_ADAPTERS = "net"

/**
 * Files directly under adapters/ every adapter may import: the fast path's switch and list
 * (adapters/fastPath.ts), the texts of published JSON Schemas (adapters/schemaText.ts).
 */
const SHARED_FILES: ReadonlySet<string> = new Set(["fastPath.ts", "schemaText.ts"])

/** `importer -> imported` folder pairs under adapters/ allowed beyond the rules above, each with its reason. */
const ADAPTER_EDGES: ReadonlyArray<readonly [string, string, string]> = [
  ["http", "mcp", "POST /v1/mcp hands the authenticated request to the MCP protocol adapter"],
  [
    "http",
    "telemetry",
    "the platform middleware records request metrics, GET /metrics renders them, the Node server opens request spans"
  ],
  [
    "http",
    "sql",
    "the platform middleware answers a failure that means the database is away with 503 (sql/unavailable.ts)"
  ],
  ["webhooks", "telemetry", "the outbox worker records delivery outcomes and the queue gauges"],
  ["scheduling", "telemetry", "the scheduling worker counts the sends it settles"],
  ["pglite", "telemetry", "the embedded database's client records SQL statement time"],
  ["postgres", "telemetry", "the Postgres client records SQL statement time"],
  [
    "postgres",
    "sql",
    "the Postgres client prepares the statements the SQL adapters mark (adapters/sql/prepared.ts) and runs them lean (adapters/sql/leanStatements.ts)"
  ],
  [
    "pglite",
    "sql",
    "the embedded database's client runs statements lean (adapters/sql/leanStatements.ts) and names the marked ones (adapters/sql/prepared.ts)"
  ]
]

/** Every import, export-from and dynamic `import()` specifier of a source text. */
const importSpecifiers = (source: string): Array<string> =>
  ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)

/** `effect/Schema` -> `effect`, `@effect/sql/Model` -> `@effect/sql`. */
const packageName = (specifier: string): string => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!
}

/** The top folder (`core`, `adapters`, `apps`, ...) and, under adapters/, the adapter folder of a repo path. */
const placeOf = (path: string) => {
  const [top = "", second = ""] = path.split("/")
  return { top, adapter: top === "adapters" ? second : "" }
}

/**
 * Why an import breaks the rules, or null. `file` is relative to the repo root (`core/x/y.ts`),
 * `specifier` as written.
 */
const violation = (file: string, specifier: string): string | null => {
  const from = placeOf(file)
  const relative = specifier.startsWith(".")
  const target = relative ? placeOf(posix.normalize(posix.join(posix.dirname(file), specifier))) : null
  if (from.top === "core") {
    if (target !== null) return target.top === "core" ? null : "core imports only files inside core/"
    const name = packageName(specifier)
    return CORE_PACKAGES.has(name) ? null : `core imports only the pure packages ${[...CORE_PACKAGES].join(", ")}`
  }
  if (from.top === "adapters" && target !== null) {
    if (target.top === "apps") return "adapters never import apps/"
    if (
      target.top !== "adapters" || target.adapter === from.adapter || target.adapter === SHARED_ADAPTERS ||
      SHARED_FILES.has(target.adapter)
    ) return null
    if (ADAPTER_EDGES.some(([a, b]) => a === from.adapter && b === target.adapter)) return null
    return `adapters/${from.adapter}/ imports another adapter folder (adapters/${target.adapter}/): share it through a core port or adapters/${SHARED_ADAPTERS}/, or list the edge in ADAPTER_EDGES`
  }
  return null
}

/** Every `file imports "specifier": why` line for a source text. */
const violations = (file: string, source: string): Array<string> =>
  importSpecifiers(source).flatMap((specifier) => {
    const why = violation(file, specifier)
    return why === null ? [] : [`${file} imports "${specifier}": ${why}`]
  })

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.[cm]?tsx?$/.test(entry.name) ? [path] : []
  })

const root = fileURLToPath(new URL("..", import.meta.url))

describe("import boundaries", () => {
  for (const top of ["core", "adapters"]) {
    it(`every file under ${top}/ keeps the dependency rule`, () => {
      const files = sourceFiles(posix.join(root, top))
      expect(files.length).toBeGreaterThan(0)
      const found = files.flatMap((path) => violations(posix.relative(root, path), readFileSync(path, "utf8")))
      expect(found, found.join("\n")).toEqual([])
    })
  }
})

/**
 * Parts of core/ an embedder can take alone: they import `effect` and the listed files, nothing else.
 * The 10DLC state machine is one file of core/registration/, whose service and stores need the rest of core.
 */
const SELF_CONTAINED: ReadonlyArray<{ readonly folder: string; readonly files: ReadonlyArray<string> }> = [
  { folder: "core/registration", files: ["core/registration/machine.ts"] }
]

/** Why an import leaves a self-contained folder, or null. */
const selfContainedViolation = (folder: string, file: string, specifier: string): string | null => {
  if (!specifier.startsWith(".")) return packageName(specifier) === "effect" ? null : `${folder}/ imports only effect`
  const target = posix.normalize(posix.join(posix.dirname(file), specifier))
  return target.startsWith(`${folder}/`) ? null : `${folder}/ imports only its own files`
}

describe("self-contained core folders", () => {
  for (const { folder, files } of SELF_CONTAINED) {
    it(`${files.join(", ")} import nothing but effect and files of ${folder}/`, () => {
      expect(files.length).toBeGreaterThan(0)
      const found = files.flatMap((file) =>
        importSpecifiers(readFileSync(posix.join(root, file), "utf8")).flatMap((specifier) => {
          const why = selfContainedViolation(folder, file, specifier)
          return why === null ? [] : [`${file} imports "${specifier}": ${why}`]
        })
      )
      expect(found, found.join("\n")).toEqual([])
    })
  }

  it("the check refuses another package, a core file outside the folder and an escape, and allows effect subpaths", () => {
    const file = "core/registration/machine.ts"
    expect(selfContainedViolation("core/registration", file, "libphonenumber-js/min")).toBe(
      "core/registration/ imports only effect"
    )
    expect(selfContainedViolation("core/registration", file, "../phone.ts")).toBe(
      "core/registration/ imports only its own files"
    )
    expect(selfContainedViolation("core/registration", file, "./../registrationInput.ts")).toBe(
      "core/registration/ imports only its own files"
    )
    expect(selfContainedViolation("core/registration", file, "effect/Schema")).toBeNull()
    expect(selfContainedViolation("core/registration", file, "./events.ts")).toBeNull()
  })
})

describe("the boundary scanner", () => {
  it("finds static, type-only, re-export, side-effect and dynamic imports", () => {
    const source = [
      `import { Effect } from "effect"`,
      `import type { Pool } from "pg"`,
      `export { x } from "./x.ts"`,
      `import "node:fs"`,
      `const m = await import("../../adapters/sql/stores.ts")`,
      `type T = import("@effect/platform-node").NodeContext`
    ].join("\n")
    expect(importSpecifiers(source)).toEqual([
      "effect",
      "pg",
      "./x.ts",
      "node:fs",
      "../../adapters/sql/stores.ts",
      "@effect/platform-node"
    ])
  })

  it("fails when core imports node:*, pg, @effect/platform-node, @effect/sql or an adapter, naming file and import", () => {
    const source = [
      `import { readFile } from "node:fs/promises"`,
      `import pg from "pg"`,
      `import { NodeHttpServer } from "@effect/platform-node"`,
      `import { SqlClient } from "@effect/sql"`,
      `import * as Stores from "../../adapters/memory/stores.ts"`,
      `import { main } from "../../apps/server/main.ts"`
    ].join("\n")
    expect(violations("core/contacts/service.ts", source)).toEqual([
      `core/contacts/service.ts imports "node:fs/promises": core imports only the pure packages effect, libphonenumber-js, ipaddr.js`,
      `core/contacts/service.ts imports "pg": core imports only the pure packages effect, libphonenumber-js, ipaddr.js`,
      `core/contacts/service.ts imports "@effect/platform-node": core imports only the pure packages effect, libphonenumber-js, ipaddr.js`,
      `core/contacts/service.ts imports "@effect/sql": core imports only the pure packages effect, libphonenumber-js, ipaddr.js`,
      `core/contacts/service.ts imports "../../adapters/memory/stores.ts": core imports only files inside core/`,
      `core/contacts/service.ts imports "../../apps/server/main.ts": core imports only files inside core/`
    ])
  })

  it("lets core import effect, its subpaths, the pure packages and core files", () => {
    const source = [
      `import { Effect } from "effect"`,
      `import * as Schema from "effect/Schema"`,
      `import { parsePhoneNumber } from "libphonenumber-js/min"`,
      `import ipaddr from "ipaddr.js"`,
      `import { NotFound } from "../errors.ts"`,
      `import { Principal } from "./principal.ts"`
    ].join("\n")
    expect(violations("core/contacts/service.ts", source)).toEqual([])
  })

  it("fails when an adapter imports apps/ or another adapter's internals, and allows net/ and listed edges", () => {
    expect(violations("adapters/sql/contacts.ts", `import { config } from "../../apps/server/config.ts"`)).toEqual([
      `adapters/sql/contacts.ts imports "../../apps/server/config.ts": adapters never import apps/`
    ])
    expect(violations("adapters/media/signedUrls.ts", `import { x } from "../blobs/memory.ts"`)).toEqual([
      `adapters/media/signedUrls.ts imports "../blobs/memory.ts": adapters/media/ imports another adapter folder (adapters/blobs/): share it through a core port or adapters/net/, or list the edge in ADAPTER_EDGES`
    ])
    const allowed = [
      `import { OutboundHttp } from "../net/http.ts"`,
      `import { FastPath } from "../fastPath.ts"`,
      `import { SqlClient } from "@effect/sql"`,
      `import { readFile } from "node:fs/promises"`,
      `import { make } from "./db.ts"`,
      `import { Contacts } from "../../core/contacts/store.ts"`
    ].join("\n")
    expect(violations("adapters/media/fetcher.ts", allowed)).toEqual([])
    expect(violations("adapters/http/handlers/mcp.ts", `import { makeMcpEndpoint } from "../../mcp/server.ts"`))
      .toEqual([])
    // The carrier's webhooks reach the HTTP adapter through a core port (core/carrier/), not the carrier adapter.
    expect(violations("adapters/http/handlers/carrier.ts", `import { verify } from "../../carrier/telnyxWebhooks.ts"`))
      .toEqual([
        `adapters/http/handlers/carrier.ts imports "../../carrier/telnyxWebhooks.ts": adapters/http/ imports another adapter folder (adapters/carrier/): share it through a core port or adapters/net/, or list the edge in ADAPTER_EDGES`
      ])
  })
})
