/**
 * The Telnyx voice adapter (adapters/carrier/telnyxVoiceAdapter.ts) behind the HTTP API, against the
 * fake Telnyx over real HTTP: `POST /agent/publish` creates the workspace's AI assistant on the first
 * publish and updates that same assistant on the next (`carrierAssistantId` kept on the agent), and a
 * carrier refusal (409) or outage (500) publishes nothing and keeps the assistant id as it was.
 */
import { Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TelnyxVoiceAdapter from "../../adapters/carrier/telnyxVoiceAdapter.ts"
import { AgentStore } from "../../core/agent/store.ts"
import { makeTestApp } from "../support/app.ts"
import { type FakeTelnyx, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { bearer, expectError } from "./helpers.ts"

let fake: FakeTelnyx
let app: Awaited<ReturnType<typeof makeTestApp>>
beforeAll(async () => {
  fake = await startFakeTelnyx()
  app = await makeTestApp({
    voice: TelnyxVoiceAdapter.layer({ apiKey: Redacted.make(fake.apiKey), messagingProfileId: "profile-1", baseUrl: fake.baseUrl }),
    telnyxPublicKey: fake.publicKey
  })
})
afterAll(async () => {
  await app?.close()
  await fake?.stop()
})

const call = (key: string, method: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method, headers: bearer(key), ...(json === undefined ? {} : { json }) })
const ok = async (res: Response, status = 200) => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return JSON.parse(text)
}
const stored = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(AgentStore, (s) => s.get(workspaceId))).then(Option.getOrThrow)

describe("POST /agent/publish on Telnyx", () => {
  it("creates the assistant on the first publish and updates the same one on the next", async () => {
    const { workspaceId, key } = await app.createWorkspace("Publish")
    await ok(await call(key, "PATCH", "/agent", { name: "Front desk", greeting: "Acme, how can I help?", instructions: "Book repairs.", tone: "warm" }))
    expect((await stored(workspaceId)).carrierAssistantId).toBeNull()

    expect((await ok(await call(key, "POST", "/agent/publish"))).agent.status).toBe("published")
    const first = await stored(workspaceId)
    const id = first.carrierAssistantId
    expect(id).not.toBeNull()
    const created = fake.voice.assistants.get(id!)!
    expect(created).toMatchObject({ name: "Front desk", greeting: "Acme, how can I help?", instructions: "Book repairs.\n\nTone: warm." })

    const before = fake.voice.assistants.size
    await ok(await call(key, "PATCH", "/agent", { name: "Night desk", instructions: "Take messages.", tone: null, jobs: [{ name: "Reminder", instructions: "Confirm the visit." }] }))
    await ok(await call(key, "POST", "/agent/publish"))
    expect((await stored(workspaceId)).carrierAssistantId).toBe(id)
    expect(fake.voice.assistants.size).toBe(before)
    expect(fake.voice.assistants.get(id!)).toMatchObject({
      name: "Night desk",
      instructions: "Take messages.\n\nJobs you may be calling about:\n- Reminder: Confirm the visit."
    })
    expect(fake.requests.filter((r) => r.path === `/v2/ai/assistants/${id}` && r.method === "POST")).toHaveLength(1)
  })

  it("an agent with no instructions still gets an assistant (Telnyx requires instructions)", async () => {
    const { workspaceId, key } = await app.createWorkspace("Defaults")
    await ok(await call(key, "PATCH", "/agent", {}))
    await ok(await call(key, "POST", "/agent/publish"))
    const assistant = fake.voice.assistants.get((await stored(workspaceId)).carrierAssistantId!)!
    expect(assistant["instructions"]).toMatch(/^You are Agent, answering calls/)
  })

  it("a refusal is 409 and an outage 500: nothing is published and the assistant id stays", async () => {
    const { workspaceId, key } = await app.createWorkspace("Refused")
    await ok(await call(key, "PATCH", "/agent", { name: "Desk" }))

    fake.script({ type: "error", status: 422, code: "10015", title: "Bad request", detail: "instructions are too long" })
    const refused = await expectError(await call(key, "POST", "/agent/publish"), 409, "failed_precondition")
    expect(refused.message).toContain("instructions are too long")
    let agent = await stored(workspaceId)
    expect(agent.published).toBeNull()
    expect(agent.carrierAssistantId).toBeNull()

    await ok(await call(key, "POST", "/agent/publish"))
    const id = (await stored(workspaceId)).carrierAssistantId
    await ok(await call(key, "PATCH", "/agent", { name: "Desk two" }))
    fake.script({ type: "serverError", status: 503 }, 3)
    await expectError(await call(key, "POST", "/agent/publish"), 500, "internal")
    agent = await stored(workspaceId)
    expect(agent.published?.name).toBe("Desk")
    expect(agent.carrierAssistantId).toBe(id)
    expect(fake.voice.assistants.get(id!)?.["name"]).toBe("Desk")
  })
})
