/**
 * `POST /v1/carrier/{name}`: routed to the configured carrier's callbacks (the CarrierCallbacks
 * port) by name. Any other name, and every name when no carrier calls back (the simulator), is the
 * 404 envelope an unknown route gets, before the body is read or anything is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { createEd25519Signer } from "../support/fakeTelnyx.ts"
import { expectError } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const signer = createEd25519Signer()

/** A Telnyx event Switchboard does not act on, signed with `signer`. */
const signedEvent = () => {
  const rawBody = JSON.stringify({
    data: {
      record_type: "event",
      id: crypto.randomUUID(),
      event_type: "number_order.completed",
      occurred_at: new Date().toISOString(),
      payload: { id: "order-1" }
    }
  })
  const timestamp = String(Math.floor(Date.now() / 1000))
  return {
    rawBody,
    headers: {
      "content-type": "application/json",
      "telnyx-timestamp": timestamp,
      "telnyx-signature-ed25519": signer.sign(timestamp, rawBody)
    }
  }
}

const post = (app: App, name: string) => {
  const { rawBody, headers } = signedEvent()
  return app.fetch(`/v1/carrier/${name}`, { method: "POST", headers, body: rawBody })
}

describe("carrier callback route", () => {
  let simulated: App
  let telnyx: App
  beforeAll(async () => {
    simulated = await makeTestApp()
    telnyx = await makeTestApp({ telnyxPublicKey: signer.publicKey })
  })
  afterAll(async () => {
    await simulated.close()
    await telnyx.close()
  })

  it("the configured carrier's name is routed to its callbacks", async () => {
    const res = await post(telnyx, "telnyx")
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true })
  })

  it("a name other than the configured carrier's is 404, as an unknown route", async () => {
    for (const name of ["twilio", "Telnyx", "simulated", "telnyx%20"]) {
      const error = await expectError(await post(telnyx, name), 404, "not_found")
      expect(error.message, name).toBe("No such route")
    }
  })

  it("with no carrier that calls back (the simulator), every name is 404", async () => {
    for (const name of ["telnyx", "simulated", "twilio"]) {
      const error = await expectError(await post(simulated, name), 404, "not_found")
      expect(error.message, name).toBe("No such route")
    }
  })

  it("the OpenAPI document describes one route, /v1/carrier/{name}", async () => {
    const doc = await (await simulated.fetch("/v1/api/openapi.json")).json()
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/v1/carrier"))
    expect(paths).toEqual(["/v1/carrier/{name}"])
    expect(doc.paths["/v1/carrier/{name}"].post.operationId).toBe("carrier.callback")
    expect(Object.keys(doc.paths["/v1/carrier/{name}"].post.responses)).toEqual(
      expect.arrayContaining(["200", "400", "401", "404"])
    )
  })
})
