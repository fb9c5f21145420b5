/**
 * The REST routes of the capability table are derived from their tools (adapters/http/capabilities.ts):
 * every route of a tool that is not read-only runs uninterruptibly, so a client that hangs up cannot
 * cut a use case between what it did outside (a carrier, a charge) and its record.
 */
import { Effect, Layer, Option } from "effect"
import { describe, expect, it } from "vitest"
import * as SimulatedVoice from "../../adapters/carrier/simulatedVoice.ts"
import {
  buildCapabilityHandlers,
  CAPABILITY_GROUPS,
  capabilityEndpoints,
  handlerOptions
} from "../../adapters/http/capabilities.ts"
import { AgentStore } from "../../core/agent/store.ts"
import { Voice } from "../../core/calls/voice.ts"
import { tools } from "../../core/tools/index.ts"
import { makeTestApp } from "../support/app.ts"
import { bearer, expectOk } from "./helpers.ts"

/** How each route of the capability groups is served, as the builder hands it to HttpApiBuilder. */
const served = () => {
  const recorded = new Map<string, { readonly uninterruptible?: boolean }>()
  for (const group of CAPABILITY_GROUPS) {
    const recorder = {
      handle(name: string, _handler: unknown, options?: { readonly uninterruptible?: boolean }) {
        recorded.set(`${group}.${name}`, options ?? {})
        return recorder
      }
    }
    buildCapabilityHandlers(group, recorder)
  }
  return recorded
}

describe("capability routes", () => {
  it("every tool that is not read-only runs uninterruptibly; reads stay interruptible", () => {
    const recorded = served()
    expect(recorded.size).toBe(tools.length)
    expect(capabilityEndpoints()).toHaveLength(tools.length)
    const writes = tools.filter((t) => !t.hints.readOnly)
    expect(writes.length).toBeGreaterThan(15)
    for (const t of tools) expect(handlerOptions(t).uninterruptible, t.name).toBe(!t.hints.readOnly)
    const uninterruptible = [...recorded.values()].filter((o) => o.uninterruptible === true)
    expect(uninterruptible).toHaveLength(writes.length)
    expect(recorded.get("agent.publish")).toEqual({ uninterruptible: true })
    expect(recorded.get("contacts.get")).toEqual({ uninterruptible: false })
  })

  it("POST /agent/publish: a client that hangs up after the carrier created the assistant keeps its id, and the next publish creates no second one", async () => {
    let created = 0
    const asked: Array<string | null> = []
    let entered!: () => void
    const inCarrier = new Promise<void>((resolve) => (entered = resolve))
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const voice = Layer.effect(
      Voice,
      Effect.map(Voice, (simulated) =>
        Voice.of({
          ...simulated,
          publishAgent: (request) =>
            Effect.promise(async () => {
              asked.push(request.assistantId)
              entered()
              await gate
              return { assistantId: request.assistantId ?? `asst_${++created}` }
            })
        }))
    ).pipe(Layer.provide(SimulatedVoice.layer))
    const app = await makeTestApp({ voice })
    const { workspaceId, key } = await app.createWorkspace("Publish")
    const call = (method: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
      app.fetch(`/v1/api${path}`, { method, headers: bearer(key), ...init })
    await expectOk(await call("PATCH", "/agent", { json: { name: "Front desk" } }))

    const client = new AbortController()
    const first = call("POST", "/agent/publish", { signal: client.signal }).catch((e: unknown) => e)
    await inCarrier
    client.abort()
    release()
    await first
    // The use case runs to its end without the client: the assistant's id is stored.
    const stored = async () =>
      Option.getOrThrow(await app.runtime.runPromise(Effect.flatMap(AgentStore, (s) => s.get(workspaceId))))
    await expect.poll(async () => (await stored()).carrierAssistantId, { timeout: 10_000 }).toBe("asst_1")
    expect((await stored()).published).not.toBeNull()

    const again = await expectOk(await call("POST", "/agent/publish"))
    expect(again.agent.status).toBe("published")
    expect(asked).toEqual([null, "asst_1"])
    expect(created).toBe(1)
    await app.close()
  })
})
