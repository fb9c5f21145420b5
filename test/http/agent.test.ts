import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { bearer } from "./helpers.ts"

let app: Awaited<ReturnType<typeof makeTestApp>>
beforeAll(async () => {
  app = await makeTestApp()
}, 60_000)
afterAll(() => app.close())

describe("probe", () => {
  it("empty body", async () => {
    const { workspaceId, key } = await app.createWorkspace()
    await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+14155550100" } })
    for (const init of [{}, { headers: { "content-type": "application/json" } }, { json: {} }, { json: null }] as Array<any>) {
      const res = await app.fetch("/v1/api/numbers/%2B14155550100/disconnect", { method: "POST", ...init, headers: { ...bearer(key), ...(init.headers ?? {}) } })
      console.log(res.status, await res.text())
    }
  })
})
