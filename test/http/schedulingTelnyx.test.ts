/**
 * A broadcast texting live through the Telnyx carrier over the fake Telnyx (CONTRACT "Scheduled
 * messages and broadcasts", pacing): one text whose answer never comes holds back none of the
 * others. The worker claims the next batch while a batch's sends are still out, so the pace is kept
 * whatever a single send waits for.
 */
import { Effect, Layer, Redacted } from "effect"
import { afterAll, expect, it } from "vitest"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import { DEFAULT_BATCH } from "../../adapters/scheduling/worker.ts"
import { RegistrationGate } from "../../core/registration/gate.ts"
import { makeTestApp } from "../support/app.ts"
import { DEFAULT_PROFILE, useFakeTelnyx } from "../support/fakeTelnyx.ts"
import { until } from "../support/until.ts"
import { bearer, expectOk } from "./helpers.ts"

const RECIPIENTS = 4 * DEFAULT_BATCH
const NUMBER = "+16285590100"

const fake = useFakeTelnyx()
let close = async () => {}
afterAll(() => close())

it("while one text's answer hangs, the rest of a broadcast at the highest pace is sent", async () => {
  const app = await makeTestApp({
    carrier: TelnyxCarrier.layer({
      apiKey: Redacted.make(fake().apiKey),
      messagingProfileId: DEFAULT_PROFILE,
      baseUrl: fake().baseUrl,
      // The hung request outlasts the test: only its own send may wait for it.
      timeoutMs: 600_000
    }),
    registration: Layer.succeed(
      RegistrationGate,
      RegistrationGate.of({ textingState: () => Effect.succeed("approved" as const) })
    ),
    schedulingWorker: true
  })
  close = () => app.close()
  const { workspaceId } = await app.createWorkspace("Acme Dental")
  await expectOk(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: NUMBER } }), 201)
  await expectOk(
    await app.admin(`/workspaces/${workspaceId}`, {
      method: "PATCH",
      json: { textingSegmentsPerMinute: 4500, quietHours: null }
    })
  )
  fake().addNumber(NUMBER, { registered: true })
  const live = (await app.createKey(workspaceId, { kind: "live" })).token

  // The first text Telnyx receives is never answered.
  fake().script({ type: "hang" }, 1)
  const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+1415555${String(i).padStart(4, "0")}`)
  const { broadcast } = await expectOk(
    await app.fetch("/v1/api/broadcasts", {
      method: "POST",
      headers: bearer(live),
      json: { body: "We are closed Friday.", recipients: { phones } }
    }),
    201
  )

  const counts = await until("every recipient but the hung one sent", async () => {
    const { broadcast: now } = await expectOk(
      await app.fetch(`/v1/api/broadcasts/${broadcast.id}`, { headers: bearer(live) })
    )
    return now.counts.sent === RECIPIENTS - 1 ? now.counts : undefined
  }, 120_000)
  expect(counts).toMatchObject({ total: RECIPIENTS, sent: RECIPIENTS - 1, failed: 0, pending: 1 })
  const texts = fake().requests.filter((r) => r.method === "POST" && r.path === "/v2/messages")
  expect(texts.map((r) => r.answer).filter((a) => a === "hang")).toHaveLength(1)
  expect(new Set(texts.map((r) => (r.json as { to: string }).to))).toEqual(new Set(phones))
}, 180_000)
