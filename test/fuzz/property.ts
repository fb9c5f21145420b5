/**
 * The one fuzz property: any request to any operation of the document gets an answer that is not a
 * 5xx, has a status the document lists for the operation, carries `X-Request-Id`, is the error
 * envelope (with that request id) whenever it is not a 2xx and the documented JSON when it is,
 * holds nothing of the other workspace, and is not a 2xx to a body holding NUL or a lone surrogate
 * (issue 15: such text is refused at the edge). The vitest suite runs it with a fixed seed and stops
 * at the first failure (shrunk); `npm run fuzz` runs it with a random seed and counts every failure.
 */
import fc from "fast-check"
import { type RawResponse, send } from "./rawHttp.ts"
import { clip, describeRequest, type FuzzRequest, operationRequest } from "./requests.ts"
import { mismatch } from "./shape.ts"
import type { World } from "./world.ts"

export interface Violation {
  /** What broke, without the details of this request: failures of one kind on one operation group together. */
  readonly kind:
    | "5xx"
    | "no answer"
    | "undocumented status"
    | "no envelope"
    | "no request id"
    | "request id mismatch"
    | "cross-workspace data"
    | "undocumented shape"
    | "accepted NUL or lone surrogate"
  readonly detail: string
}

const FORBIDDEN_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** A NUL or lone surrogate in any key or string of a JSON body, or undefined. */
const forbiddenText = (body: string | null): string | undefined => {
  let value: unknown
  try {
    value = JSON.parse(body ?? "")
  } catch {
    return undefined
  }
  const search = (v: unknown): string | undefined => {
    if (typeof v === "string") return FORBIDDEN_TEXT.test(v) ? v : undefined
    if (v === null || typeof v !== "object") return undefined
    for (const [k, x] of Object.entries(v)) {
      const hit = search(k) ?? search(x)
      if (hit !== undefined) return hit
    }
    return undefined
  }
  return search(value)
}

const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/

export const violations = (world: World, req: FuzzRequest, res: RawResponse): Array<Violation> => {
  const found: Array<Violation> = []
  const op = world.document.operations.find((o) => o.id === req.operation)!
  if (res.status >= 500) found.push({ kind: "5xx", detail: `answered ${res.status}` })
  if (!op.statuses.has(res.status)) {
    found.push({ kind: "undocumented status", detail: `${res.status} is not among ${[...op.statuses].join(", ")}` })
  }
  const requestId = res.headers["x-request-id"]
  if (requestId === undefined || requestId === "") {
    found.push({ kind: "no request id", detail: "no X-Request-Id header" })
  }
  const sent = req.headers.find(([n]) => n.toLowerCase() === "x-request-id")?.[1]
  // A 431 means the head was too large to read: the id the client sent may be in the part dropped.
  if (
    sent !== undefined && REQUEST_ID.test(sent) &&
    req.headers.filter(([n]) => n.toLowerCase() === "x-request-id").length === 1 &&
    requestId !== sent && res.status !== 431
  ) {
    found.push({ kind: "request id mismatch", detail: `sent a valid X-Request-Id ${sent}, got back ${requestId}` })
  }
  // A page or redirect the document promises (not JSON) is its own answer; any other non-2xx is the envelope.
  const page = op.pages.has(res.status) && !/json/i.test(res.headers["content-type"] ?? "")
  if ((res.status < 200 || res.status >= 300) && !page) {
    let error: any
    try {
      const body = JSON.parse(res.body)
      if (Object.keys(body).length === 1) error = body.error
    } catch {
      // not JSON: reported below
    }
    const keys = error !== null && typeof error === "object" ? Object.keys(error).sort().join(",") : ""
    if (
      keys !== "code,message,requestId" || typeof error.code !== "string" || typeof error.message !== "string" ||
      typeof error.requestId !== "string"
    ) {
      found.push({ kind: "no envelope", detail: `content-type ${res.headers["content-type"]}` })
    } else if (error.requestId !== requestId) {
      found.push({
        kind: "request id mismatch",
        detail: `envelope requestId ${error.requestId}, X-Request-Id ${requestId}`
      })
    }
  }
  const schema = op.answers.get(res.status)
  if (res.status >= 200 && res.status < 300 && schema !== undefined) {
    let miss: string | undefined
    try {
      miss = mismatch(schema, JSON.parse(res.body), world.document.resolve)
    } catch {
      miss = "the answer is not JSON"
    }
    if (miss !== undefined) found.push({ kind: "undocumented shape", detail: miss })
  }
  const forbidden = op.body !== undefined && res.status >= 200 && res.status < 300 ? forbiddenText(req.body) : undefined
  if (forbidden !== undefined) {
    found.push({
      kind: "accepted NUL or lone surrogate",
      detail: `the body held ${JSON.stringify(clip(forbidden, 80))}`
    })
  }
  // The admin API is the operator's, over every workspace (it lists them all): the check is the API keys'.
  const leaked = op.path.startsWith("/v1/admin/") ? [] : world.foreign.filter((s) => res.body.includes(s))
  if (leaked.length > 0) {
    found.push({ kind: "cross-workspace data", detail: `the answer holds ${leaked.slice(0, 3).join(", ")}` })
  }
  return found
}

/** What the server logged under a request id (its log lines arrive a moment after the answer). */
const serverLog = async (world: World, requestId: string | undefined) => {
  if (requestId === undefined) return []
  await new Promise((done) => setTimeout(done, 50))
  return world
    .serverOutput()
    .split(/\n(?=\[\d\d:\d\d:\d\d)/)
    .filter((entry) => entry.includes(`requestId: ${requestId}\n`) || entry.endsWith(`requestId: ${requestId}`))
    // The message, the error and its causes; no stack frames.
    .map((entry) => entry.split("\n").filter((line, i) => i < 2 || !/^\s+at /.test(line)).slice(0, 12).join("\n"))
}

const answer = (res: RawResponse | undefined, log: ReadonlyArray<string>) =>
  res === undefined
    ? "no answer"
    : [
      `answer ${res.status} x-request-id=${res.headers["x-request-id"]} content-type=${res.headers["content-type"]}`,
      `  ${JSON.stringify(clip(res.body))}`,
      ...log.map((l) => `server log:\n${l}`)
    ].join("\n")

export interface FuzzStats {
  requests: number
  /** Requests with any violation. */
  failing: number
  fiveXX: number
  nonEnvelope: number
  /** The operations requested at least once. */
  readonly operations: Set<string>
  /** The shortest failing request seen of each kind of violation on each operation. */
  readonly failures: Map<string, { readonly reproduction: string; readonly size: number }>
}

export const newStats = (): FuzzStats => ({
  requests: 0,
  failing: 0,
  fiveXX: 0,
  nonEnvelope: 0,
  operations: new Set(),
  failures: new Map()
})

/** Any generated request, to a uniformly chosen operation of the document. */
export const requests = (world: World): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(...world.document.operations.map((op) => operationRequest(op, world)))

/**
 * The property. `onFailure: "throw"` fails the run (fast-check then shrinks it); `"count"` records
 * the failure in `stats` and goes on.
 */
export const fuzzProperty = (world: World, stats: FuzzStats, onFailure: "throw" | "count") =>
  fc.asyncProperty(requests(world), async (req) => {
    stats.requests++
    stats.operations.add(req.operation)
    let res: RawResponse | undefined
    let found: Array<Violation>
    try {
      res = await send(world.port, req)
      found = violations(world, req, res)
    } catch (e) {
      found = [{ kind: "no answer", detail: String(e) }]
    }
    if (found.some((v) => v.kind === "5xx")) stats.fiveXX++
    if (found.some((v) => v.kind === "no envelope")) stats.nonEnvelope++
    if (found.length === 0) return
    stats.failing++
    const log = res !== undefined && res.status >= 500 ? await serverLog(world, res.headers["x-request-id"]) : []
    const text = `${found.map((v) => `${v.kind}: ${v.detail}`).join("\n")}\n${describeRequest(req)}\n${
      answer(res, log)
    }`
    if (onFailure === "throw") throw new Error(text)
    // One entry per kind of failure, status, operation and (for a 5xx) the error the server logged.
    const lines = log[0]?.split("\n") ?? []
    const cause = (lines.find((l) => l.includes("[cause]:")) ?? lines[1])?.trim()
    const key = `${[...new Set(found.map((v) => v.kind))].sort().join(", ")}: ${
      res?.status ?? "-"
    } on ${req.operation}${cause === undefined ? "" : ` (${cause})`}`
    const size = req.target.length + (req.body?.length ?? 0) +
      req.headers.reduce((n, [a, b]) => n + a.length + b.length, 0)
    const seen = stats.failures.get(key)
    if (seen === undefined || size < seen.size) stats.failures.set(key, { reproduction: text, size })
  })
