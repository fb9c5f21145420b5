/**
 * `deno task test`: the app in-process under Deno's own runtime and test runner, so Deno-specific
 * breakage (permissions, web Request handling, Web Crypto) shows up without a server.
 */
import { makeTestApp } from "../support/app.ts"

declare const Deno: any

const assertEquals = (actual: unknown, expected: unknown, label: string) => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${label}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
  }
}

Deno.test("contacts round trip and the error envelope under Deno", async () => {
  const app = await makeTestApp()
  try {
    const auth = { authorization: `Bearer ${app.testKey}` }
    const created = await app.fetch("/v1/api/contacts", {
      method: "POST",
      headers: auth,
      json: { firstName: "Grace", phone: "(415) 555-0199" }
    })
    assertEquals(created.status, 201, "create status")
    const { contact } = await created.json()
    assertEquals(contact.phones, [{ value: "+14155550199" }], "normalized phone")

    const listed = await (await app.fetch("/v1/api/contacts?q=grace", { headers: auth })).json()
    assertEquals(listed.contacts.map((c: { id: string }) => c.id), [contact.id], "search")

    const unauth = await app.fetch("/v1/api/contacts")
    assertEquals(unauth.status, 401, "401 status")
    const body = await unauth.json()
    assertEquals(body.error.code, "unauthenticated", "401 code")
    assertEquals(body.error.requestId, unauth.headers.get("x-request-id"), "request id echoed in body")

    const big = await app.fetch("/v1/api/contacts", {
      method: "POST",
      headers: auth,
      json: { firstName: "x".repeat(1_100_000) }
    })
    assertEquals(big.status, 400, "oversized body")
    assertEquals((await big.json()).error.message, "Request body exceeds 1 MiB", "oversized message")

    const deleted = await app.fetch(`/v1/api/contacts/${contact.id}`, { method: "DELETE", headers: auth })
    assertEquals(await deleted.json(), { deleted: true }, "delete")
    assertEquals((await app.fetch(`/v1/api/contacts/${contact.id}`, { headers: auth })).status, 404, "gone")
  } finally {
    await app.close()
  }
})

Deno.test("the library path (FAST_PATH=false: HttpApiBuilder's group and web handler) answers as the fast path under Deno", async () => {
  const apps = [await makeTestApp(), await makeTestApp({ fastPath: false })]
  try {
    const answers = await Promise.all(
      apps.map(async (app) => {
        const auth = { authorization: `Bearer ${app.testKey}`, "x-request-id": "req_deno" }
        const created = await app.fetch("/v1/api/contacts", {
          method: "POST",
          headers: auth,
          json: { firstName: "Grace" }
        })
        const { contact } = await created.json()
        const got = await app.fetch(`/v1/api/contacts/${contact.id}`, { headers: auth })
        const refused = await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: 7 } })
        return [created.status, got.status, (await got.json()).contact.firstName, refused.status, await refused.text()]
      })
    )
    assertEquals(answers[1], answers[0], "the same answers")
    assertEquals(answers[0]!.slice(0, 4), [201, 200, "Grace", 400], "what they answered")
  } finally {
    await Promise.all(apps.map((app) => app.close()))
  }
})

Deno.test("the outbound HTTP client dials only public addresses under Deno too (DNS rebinding)", async () => {
  const { Effect } = await import("effect")
  const OutboundHttp = await import("../../adapters/net/http.ts")
  let hits = 0
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    hits++
    return new Response("ok")
  })
  const url = `http://rebind.test:${server.addr.port}/hook`
  const loopback: any = (_host: string, _options: unknown, callback: any) =>
    callback(null, [{ address: "127.0.0.1", family: 4 }])
  const get = (allowPrivate: boolean) =>
    Effect.runPromise(
      Effect.flatMap(OutboundHttp.OutboundHttp, (http) =>
        Effect.promise(() =>
          http.fetch(url, { method: "GET" }).then(
            async (res) => `status ${res.status} ${await res.text()}`,
            (e) => OutboundHttp.describeFetchError(e)
          )
        )).pipe(Effect.provide(OutboundHttp.layer(allowPrivate, loopback)))
    )
  try {
    assertEquals(await get(false), "rebind.test resolves to a loopback address (127.0.0.1)", "blocked")
    assertEquals(hits, 0, "nothing dialled")
    assertEquals(await get(true), "status 200 ok", "allowed in development")
    assertEquals(hits, 1, "dialled once")
  } finally {
    await server.shutdown()
  }
})

Deno.test("webhook secrets seal and open under Deno, and the key file is made with mode 0600", async () => {
  const { Effect } = await import("effect")
  const Secrets = await import("../../adapters/sql/secrets.ts")
  const dir = await Deno.makeTempDir()
  try {
    const file = `${dir}/secrets.key`
    const key = await Effect.runPromise(Secrets.loadKey(undefined, file))
    assertEquals((await Deno.stat(file)).mode & 0o777, 0o600, "key file mode")
    assertEquals(
      [...(await Effect.runPromise(Secrets.loadKey(undefined, file)))],
      [...key],
      "the same key on the next boot"
    )
    const sealer = Secrets.makeSealer(key)
    const sealed = sealer.seal("whsec_c2VjcmV0", "ctx")
    assertEquals(sealer.open(sealed, "ctx"), "whsec_c2VjcmV0", "round trip")
    let refused = false
    try {
      sealer.open(sealed, "another endpoint")
    } catch {
      refused = true
    }
    assertEquals(refused, true, "another context does not open it")
  } finally {
    await Deno.remove(dir, { recursive: true })
  }
})
