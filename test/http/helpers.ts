/** Assertions shared by the HTTP suites: the error envelope, request ids and rate-limit headers. */
import { expect } from "vitest"

export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly requestId: string
}

/**
 * Asserts the documented envelope: status, exactly `{error: {code, message, requestId}}`, a JSON
 * content type, `requestId` equal to `X-Request-Id`, and no stack trace. Returns `error`.
 */
export const expectError = async (res: Response, status: number, code: string): Promise<ErrorBody> => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  const body = JSON.parse(text)
  expect(Object.keys(body)).toEqual(["error"])
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "requestId"])
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe("string")
  expect(body.error.message.length).toBeGreaterThan(0)
  expect(typeof body.error.requestId).toBe("string")
  expect(body.error.requestId.length).toBeGreaterThan(0)
  expect(body.error.requestId).toBe(res.headers.get("x-request-id"))
  expect(text).not.toMatch(/\bat .+\.ts:\d+|stack|node_modules/i)
  return body.error
}

export const expectRateHeaders = (res: Response) => {
  for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    const v = res.headers.get(h)
    expect(v, `${h} on ${res.status}`).not.toBeNull()
    expect(v).toMatch(/^\d+$/)
  }
  expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThanOrEqual(Number(res.headers.get("ratelimit-limit")))
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Contacts are ordered by creation time in milliseconds: space creates so the order is defined. */
export const tick = () => new Promise((resolve) => setTimeout(resolve, 3))

/** A success answer's JSON, failing with the body when the status is not `status`. */
export const expectOk = async (res: Response, status = 200) => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return JSON.parse(text)
}

/**
 * Moves a workspace's clock (the `clock` test helper, with its test key) to noon on the 10th of next
 * month, so its prorated charges do not depend on the day the suite runs (late in a month they fall
 * under the minimum charge and are waived: core/billing/pricing.ts).
 */
export const toTenthOfNextMonth = async (
  fetch: (path: string, init: RequestInit & { json?: unknown }) => Promise<Response>,
  testKey: string
) => {
  const now = new Date()
  const target = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 10, 12)
  const res = await fetch("/v1/api/test-helpers/clock", {
    method: "POST",
    headers: { authorization: `Bearer ${testKey}` },
    json: { advanceSeconds: Math.ceil((target - now.getTime()) / 1000) }
  })
  expect(res.status, await res.clone().text()).toBe(200)
}
