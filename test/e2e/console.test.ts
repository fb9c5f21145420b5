/**
 * The web console in a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against the real server process over a socket: sign-in through the mailed link, the workspace
 * picker, the inbox and a thread (a text, a call with its recording, transcript and summary, a new
 * text arriving live; a long thread opened at its newest entries, earlier ones on request), replying, a note, assigning, marking done, developer settings (a webhook
 * endpoint, an API key used with fetch, the delivery log and its resend), what a `member` may not
 * reach, another workspace's data never shown, and axe-core on each main screen at desktop and
 * 375px widths (no `serious` or `critical` violation).
 *
 * Without a Chromium the suite is skipped, and under CI=true it fails (.ci/run installs Debian's chromium).
 * `npm run screenshots` (SCREENSHOTS=1) also saves docs/screenshots/*.png, shown in docs/features/console.md.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { resolve } from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { TIMELINE_PAGE } from "../../apps/console/screens/thread.tsx"
import { business, readyBilling } from "../support/registration.ts"
import { freePort, type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const root = resolve(import.meta.dirname, "../..")
const chromiumPath = [process.env["CHROMIUM_PATH"], "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && existsSync(p)
)
const screenshots = process.env["SCREENSHOTS"] === "1"
const axeSource = readFileSync(resolve(root, "node_modules/axe-core/axe.min.js"), "utf8")

const ADMIN_TOKEN = "console-e2e-admin"
const NUMBER = "+12175550100"
const ADA = "+12175550111"
const BOILER = "+12175550122"
const OLD = "+12175550133"
const CHATTY = "+12175550144"
const OTHER_NUMBER = "+13125550100"
const OWNER = "owner@localhost"
const SAM = "sam@example.com"
const DESKTOP = { width: 1280, height: 860 }
const PHONE = { width: 375, height: 740 }

const runs = chromiumPath !== undefined
if (!runs && process.env["CI"] === "true") {
  describe("the console in a browser", () => {
    it("needs Chromium under CI=true", () => {
      expect.fail("No Chromium at /usr/bin/chromium (or CHROMIUM_PATH): .ci/run installs Debian's chromium package")
    })
  })
}

interface Received {
  readonly id: string
  readonly type: string
  readonly data: Record<string, unknown>
}

/** A webhook receiver on a local port: every delivery, in arrival order. */
const startReceiver = async () => {
  const received: Array<Received> = []
  const server: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      try {
        const event = JSON.parse(body)
        received.push({ id: String(req.headers["webhook-id"]), type: event.type, data: event.data ?? {} })
      } catch {
        // not an event: ignored
      }
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}

/** Polls `probe` until it answers something other than undefined (no timed assertion: the suite's timeout bounds it). */
const eventually = async <A>(probe: () => Promise<A | undefined> | A | undefined): Promise<A> => {
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe.runIf(runs)("the console in a browser", () => {
  const tempDir = tempDirs("console")
  let server: RunningServer
  let base: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let workspaceId: string
  let otherWorkspaceId: string
  let testKey: string
  let adaThread: string
  let ownerId: string

  const call = async (path: string, init: { method?: string; json?: unknown; token?: string } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${init.token ?? testKey}`,
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
    })
    const text = await res.text()
    return { status: res.status, body: text === "" ? null : JSON.parse(text) }
  }
  const ok = async (path: string, init: Parameters<typeof call>[1] = {}) => {
    const res = await call(path, init)
    if (res.status >= 300) {
      throw new Error(
        `${init.method ?? (init.json === undefined ? "GET" : "POST")} ${path} answered ${res.status}: ${
          JSON.stringify(res.body)
        }`
      )
    }
    return res.body
  }
  const admin = (path: string, json?: unknown, method?: string) =>
    ok(`/v1/admin${path}`, { token: ADMIN_TOKEN, json, ...(method === undefined ? {} : { method }) })

  /** Runs axe-core in the page at both widths; no serious or critical violation, and nothing wider than a phone at 375px. */
  const accessible = async (label: string) => {
    try {
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size)
        if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
        const violations = await page.evaluate(async () => {
          const result = await (window as any).axe.run(document, { resultTypes: ["violations"] })
          return result.violations.map((v: any) => ({
            id: v.id,
            impact: v.impact,
            help: v.help,
            nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(" "))
          }))
        })
        expect(
          violations.filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical"),
          `${label} at ${size.width}px`
        ).toEqual([])
        if (size === PHONE) {
          // No sideways scrolling of the page (a wide table scrolls inside its own region).
          const wide = await page.evaluate((width) => {
            if (document.documentElement.scrollWidth <= width) return []
            const clipped = (e: Element): boolean => {
              for (let a = e.parentElement; a !== null && a !== document.body; a = a.parentElement) {
                if (getComputedStyle(a).overflowX !== "visible") return true
              }
              return false
            }
            return Array.from(document.querySelectorAll("body *"))
              .filter((e) => e.getBoundingClientRect().right > width + 0.5 && !clipped(e))
              .slice(0, 5)
              .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? "").slice(0, 40)}`)
          }, PHONE.width)
          expect(wide, `${label} fits 375px`).toEqual([])
        }
      }
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  }

  /** Saves the page; `height` makes the window that tall first, so a pane that scrolls shows all of it. */
  const shoot = async (name: string, height?: number) => {
    if (!screenshots) return
    mkdirSync(resolve(root, "docs/screenshots"), { recursive: true })
    if (height !== undefined) await page.setViewportSize({ ...DESKTOP, height })
    try {
      await page.screenshot({ path: resolve(root, `docs/screenshots/${name}.png`) })
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  }

  /** The newest sign-in link mailed to `email` after `before` mails (the outbox of its first workspace). */
  const mailedLink = async (email: string, before: number) =>
    eventually(async () => {
      const mail = (await admin(`/workspaces/${workspaceId}/mail`)).mail.filter((m: { to: string }) => m.to === email)
      if (mail.length <= before) return undefined
      return new RegExp(`${base}/app/sign-in/[A-Za-z0-9_-]+`).exec(mail[0].text)?.[0]
    })
  const mailCount = async (email: string) =>
    (await admin(`/workspaces/${workspaceId}/mail`)).mail.filter((m: { to: string }) => m.to === email).length

  /** Asks for a link in the sign-in form, then opens the mailed link, as a member does. */
  const signIn = async (p: Page, email: string) => {
    const before = await mailCount(email)
    await p.goto(`${base}/app`)
    await p.getByLabel("Email address").fill(email)
    await p.getByRole("button", { name: "Email me a sign-in link" }).click()
    await p.getByRole("heading", { name: "Check your mail" }).waitFor()
    await p.goto(await mailedLink(email, before))
  }

  const nav = (name: string) => page.getByRole("navigation", { name: "Console" }).getByRole("link", { name })

  beforeAll(async () => {
    receiver = await startReceiver()
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    server = await startServer("node", {
      DATA_DIR: tempDir(),
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      ADMIN_TOKEN,
      TEST_HELPERS: "true",
      OUTBOUND_ALLOW_PRIVATE: "true",
      RATE_LIMIT_PER_MINUTE: "1000000"
    })
    testKey = server.testKey!
    const { workspaces } = await admin("/workspaces")
    workspaceId = workspaces.find((w: { name: string }) => w.name === "Default workspace").id
    // A workspace that can text for real: billing ready, a number, a filed and approved registration.
    await admin(`/workspaces/${workspaceId}`, { billing: readyBilling }, "PATCH")
    await admin(`/workspaces/${workspaceId}/numbers`, { e164: NUMBER })
    const live = (await admin(`/workspaces/${workspaceId}/keys`, { kind: "live" })).key.token
    await ok("/v1/api/messaging/registration", { token: live, json: { business } })
    for (let i = 0; i < 3; i++) await ok("/v1/api/messaging/refresh", { token: live, method: "POST" })
    // The AI agent answers the number, so a call has a transcript and a summary.
    await ok("/v1/api/agent", {
      method: "PATCH",
      json: { name: "Front desk", greeting: "Thanks for calling Acme Plumbing." }
    })
    await ok("/v1/api/agent/publish", { method: "POST" })
    await ok(`/v1/api/numbers/${encodeURIComponent(NUMBER)}/connect`, { method: "POST" })
    await ok("/v1/api/contacts", { json: { firstName: "Ada", lastName: "Lovelace", phone: ADA } })
    const first = await ok("/v1/api/test-helpers/inbound-messages", {
      json: { from: ADA, to: NUMBER, body: "Is the shop open on Sunday?" }
    })
    adaThread = first.conversationId
    await ok("/v1/api/test-helpers/inbound-calls", {
      json: { from: ADA, to: NUMBER, scenario: "answered", durationSeconds: 75 }
    })
    await ok("/v1/api/test-helpers/inbound-messages", {
      json: { from: BOILER, to: NUMBER, body: "Do you fix boilers?" }
    })
    const old = await ok("/v1/api/test-helpers/inbound-messages", {
      json: { from: OLD, to: NUMBER, body: "Thanks, all fixed!" }
    })
    await ok(`/v1/api/conversations/${old.conversationId}`, { method: "PATCH", json: { status: "done" } })

    // Another workspace, whose owner is also a member here; and a `member` here.
    const other = await admin("/workspaces", { name: "Other shop" })
    otherWorkspaceId = other.workspace.id
    await admin(`/workspaces/${otherWorkspaceId}/numbers`, { e164: OTHER_NUMBER })
    const otherKey = (await admin(`/workspaces/${otherWorkspaceId}/keys`, { kind: "test" })).key.token
    await ok("/v1/api/test-helpers/inbound-messages", {
      token: otherKey,
      json: { from: "+13125550111", to: OTHER_NUMBER, body: "Secret of the other shop" }
    })
    // The first boot's owner is also an admin of the other workspace; Sam is a `member` here.
    const owner = (await admin(`/workspaces/${workspaceId}/members`)).members.find((m: { email: string }) =>
      m.email === OWNER
    )
    ownerId = owner.id
    await admin(`/members/${ownerId}`, { name: "Olive Owner" }, "PATCH")
    await admin(`/workspaces/${otherWorkspaceId}/members`, { email: OWNER, name: "Olive Owner", role: "admin" })
    await admin(`/workspaces/${workspaceId}/members`, { email: SAM, name: "Sam Member", role: "member" })

    browser = await chromium.launch({ executablePath: chromiumPath!, args: ["--no-sandbox"] })
    context = await browser.newContext({ viewport: DESKTOP, baseURL: base })
    // Bounds for a hung step, not for a slow machine.
    context.setDefaultTimeout(60_000)
    page = await context.newPage()
  })

  // A failure says what the page showed.
  afterEach(async ({ task }) => {
    if (task.result?.state !== "fail" || browser === undefined) return
    for (const p of browser.contexts().flatMap((c) => c.pages())) {
      const text = await p.evaluate(() => document.querySelector("main")?.innerText ?? "").catch(() => "(closed)")
      console.error(`The page at ${p.url()} showed:\n${text.slice(0, 3000)}`)
    }
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await receiver?.close()
  })

  it("signs in through the mailed link and picks a workspace", async () => {
    await page.goto(`${base}/app`)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await accessible("sign-in")
    await signIn(page, OWNER)
    // A member of two workspaces picks one.
    await page.getByRole("heading", { name: "Choose a workspace" }).waitFor()
    await accessible("workspace picker")
    await page.getByRole("button", { name: "Open Default workspace" }).click()
    await page.getByRole("heading", { name: "Inbox" }).waitFor()
    expect(new URL(page.url()).pathname).toBe("/app/inbox")
  })

  it("lists open conversations with unread counts and done ones apart, and nothing of another workspace", async () => {
    const open = page.getByRole("list", { name: "Open conversations" })
    await open.getByRole("link", { name: /Ada Lovelace/ }).waitFor()
    const ada = open.getByRole("link", { name: /Ada Lovelace/ })
    expect(await ada.textContent()).toMatch(/\d+ unread/)
    expect(await open.getByRole("link", { name: new RegExp(BOILER.replace("+", "\\+")) }).textContent()).toContain(
      "Do you fix boilers?"
    )
    expect(await open.textContent()).not.toContain("Thanks, all fixed!")
    expect(await page.content()).not.toContain("Secret of the other shop")
    await accessible("inbox")
    await shoot("inbox")
    await page.getByRole("navigation", { name: "Conversation status" }).getByRole("link", { name: "Done" }).click()
    await page.getByRole("list", { name: "Done conversations" }).getByText("Thanks, all fixed!").waitFor()
    await page.getByRole("navigation", { name: "Conversation status" }).getByRole("link", { name: "Open" }).click()
    await open.waitFor()
  })

  it("opens a thread: the text, then the call with its recording, transcript and summary", async () => {
    await page.getByRole("list", { name: "Open conversations" }).getByRole("link", { name: /Ada Lovelace/ }).click()
    await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor()
    const timeline = page.getByRole("list", { name: "Timeline, oldest first" })
    await timeline.getByText("Is the shop open on Sunday?").waitFor()
    await timeline.getByText("Answered by the AI agent").waitFor()
    await timeline.getByText("I would like to book a table for two tonight at seven").waitFor()
    await timeline.getByText(/The caller booked a table for two/).waitFor()
    const recording = timeline.getByLabel("Call recording")
    const src = await recording.getAttribute("src")
    expect(src).toMatch(new RegExp(`^${base}/v1/media/`))
    // The signed URL serves the audio to the browser.
    expect(await page.evaluate(async (url) => (await fetch(url)).headers.get("content-type"), src!)).toBe("audio/wav")
    // Oldest first: the text before the call.
    const order = await timeline.locator(":scope > li").evaluateAll((items) => items.map((li) => li.className))
    expect(order[0]).toContain("act-message")
    expect(order[1]).toContain("act-call")
    await accessible("thread")
    await shoot("thread", 1700)
  })

  it("shows a new text in the open thread without a reload (the live event feed)", async () => {
    const timeline = page.getByRole("list", { name: "Timeline, oldest first" })
    await page.evaluate(() => ((window as any).sameDocument = true))
    await ok("/v1/api/test-helpers/inbound-messages", {
      json: { from: ADA, to: NUMBER, body: "Also, do you sell gift cards?" }
    })
    await timeline.getByText("Also, do you sell gift cards?").waitFor()
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true)
  })

  it("opens a long thread at its newest entries, the reply box ready, and shows earlier ones a page at a time", async () => {
    const texts = TIMELINE_PAGE + 5
    let id = ""
    for (let i = 1; i <= texts; i++) {
      id = (await ok("/v1/api/test-helpers/inbound-messages", {
        json: { from: CHATTY, to: NUMBER, body: `Chatty text number ${i}.` }
      })).conversationId
    }
    await page.goto(`${base}/app/inbox/${id}`)
    const timeline = page.getByRole("list", { name: "Timeline, oldest first" })
    await timeline.getByText(`Chatty text number ${texts}.`).waitFor()
    await page.getByLabel(`Reply to ${CHATTY}`).waitFor()
    // Only the newest page is in the page; the oldest five wait behind the button.
    expect(await timeline.locator(":scope > li").count()).toBe(TIMELINE_PAGE)
    expect(await timeline.getByText("Chatty text number 5.", { exact: true }).count()).toBe(0)
    await timeline.getByText("Chatty text number 6.", { exact: true }).waitFor()
    await accessible("long thread")
    await page.getByRole("button", { name: "Show 5 earlier (5 not shown)" }).click()
    await timeline.getByText("Chatty text number 1.", { exact: true }).waitFor()
    expect(await timeline.locator(":scope > li").count()).toBe(texts)
    expect(await page.getByRole("button", { name: /earlier/ }).count()).toBe(0)
  })

  it("developer settings: a webhook endpoint and an API key made in the console; the token works once shown", async () => {
    await nav("Developer settings").click()
    await page.getByRole("heading", { name: "Developer settings" }).waitFor()
    await page.getByLabel("URL").fill(receiver.url)
    await page.getByLabel("Label (optional)").fill("Receiver")
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const secret = await page.getByLabel("The new signing secret").textContent()
    expect(secret).toMatch(/^whsec_/)
    await page.getByRole("button", { name: "Done" }).click()
    await page.getByRole("list", { name: "Webhook endpoints" }).getByRole("link", { name: "Receiver" }).waitFor()

    await page.getByLabel("Kind").selectOption("test")
    await page.getByLabel("Name (optional)").fill("CRM sync")
    for (const scope of ["numbers:manage", "agent:manage", "webhooks:manage"]) {
      await page.getByRole("checkbox", { name: scope }).uncheck()
    }
    await page.getByRole("button", { name: "Create key" }).click()
    const token = (await page.getByLabel("The new API key").textContent())!
    expect(token).toMatch(/^svc_test_/)
    const contacts = await call("/v1/api/contacts", { token })
    expect(contacts.status).toBe(200)
    expect(contacts.body.contacts.map((c: { firstName: string | null }) => c.firstName)).toContain("Ada")
    // Its scopes are the ones picked.
    expect((await call("/v1/api/webhooks", { token })).status).toBe(403)
    await accessible("developer settings")
    await shoot("developer-settings")
    await page.getByRole("button", { name: "Done" }).click()
    // Shown once: gone from the page, the key listed by name only.
    expect(await page.content()).not.toContain(token)
    await page.getByRole("list", { name: "API keys" }).getByText("CRM sync").waitFor()
  })

  it("replies, notes, assigns and marks done as the member; the reply's message.delivered reaches the webhook", async () => {
    await page.goto(`${base}/app/inbox/${adaThread}`)
    await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor()
    const me = ownerId

    await page.getByLabel("Reply to Ada Lovelace").fill("Yes, 10 to 4 on Sundays.")
    await page.getByRole("button", { name: "Send text" }).click()
    const timeline = page.getByRole("list", { name: "Timeline, oldest first" })
    await timeline.getByText("Yes, 10 to 4 on Sundays.").waitFor()
    const thread = await ok(`/v1/api/conversations/${adaThread}`)
    const reply = thread.activities.find((a: { body: string | null }) => a.body === "Yes, 10 to 4 on Sundays.")
    expect(reply).toMatchObject({ type: "message", direction: "outbound", authorUid: me })
    expect(reply.deliveryStatus).not.toBe("simulated")
    await eventually(() =>
      receiver.received.find((e) => e.type === "message.delivered" && e.data["activityId"] === reply.id)
    )

    await page.getByRole("radio", { name: "Internal note" }).check()
    await page.getByLabel("Note for the team (never sent)").fill("Regular customer, prefers texts.")
    await page.getByRole("button", { name: "Add note" }).click()
    await timeline.locator(".act-note").getByText("Regular customer, prefers texts.").waitFor()

    await page.getByLabel("Assigned to").selectOption(me)
    await eventually(async () =>
      (await ok(`/v1/api/conversations/${adaThread}`)).conversation.assigneeUid === me || undefined
    )

    await page.getByRole("button", { name: "Mark done" }).click()
    await page.getByRole("button", { name: "Reopen" }).waitFor()
    const after = await ok(`/v1/api/conversations/${adaThread}`)
    expect(after.conversation.status).toBe("done")
    const note = after.activities.find((a: { type: string }) => a.type === "internal_note")
    expect(note).toMatchObject({ authorUid: me, body: "Regular customer, prefers texts." })
  })

  it("shows a webhook endpoint's delivery log and resends a delivery", async () => {
    await nav("Developer settings").click()
    await page.getByRole("list", { name: "Webhook endpoints" }).getByRole("link", { name: "Receiver" }).click()
    await page.getByRole("heading", { name: "Delivery log" }).waitFor()
    const delivered = receiver.received.find((e) => e.type === "message.delivered")!
    const row = page.getByRole("row", { name: /message\.delivered/ }).first()
    await row.waitFor()
    const before = receiver.received.filter((e) => e.id === delivered.id).length
    await page.getByRole("button", { name: `Resend message.delivered (${delivered.id})` }).click()
    await page.getByText(/^Resent message\.delivered: succeeded/).waitFor()
    expect(receiver.received.filter((e) => e.id === delivered.id).length).toBe(before + 1)
    await accessible("webhook endpoint")
  })

  it("passes axe on every other main screen, and shows the registration's validation messages", async () => {
    for (
      const [link, heading] of [
        ["Contacts", "Contacts"],
        ["Scheduled & broadcasts", "Scheduled & broadcasts"],
        ["Numbers", "Numbers"],
        ["AI agent", "AI agent"],
        ["Opt-outs", "Opt-outs"],
        ["Texting registration", "Texting registration"]
      ] as const
    ) {
      await nav(link).click()
      await page.getByRole("heading", { name: heading, level: 1 }).waitFor()
      await page.getByRole("status").filter({ hasText: /^Loading/ }).first().waitFor({ state: "detached" })
      await accessible(heading)
    }
    // Approved already: the filing form is for a workspace not yet registered. The other workspace's is.
    await page.getByText("Approved: texting is on").waitFor()
    await nav("Contacts").click()
    await page.getByRole("link", { name: "New contact" }).click()
    await page.getByRole("heading", { name: "New contact" }).waitFor()
    await accessible("new contact")
  })

  it("switches to the other workspace and shows only its data; its registration form shows the server's messages", async () => {
    await page.setViewportSize(PHONE)
    await page.getByRole("button", { name: "Menu" }).click()
    await page.getByRole("link", { name: "Switch workspace" }).click()
    await page.getByRole("button", { name: "Open Other shop" }).click()
    await page.getByRole("list", { name: "Open conversations" }).getByText("Secret of the other shop").waitFor()
    expect(await page.content()).not.toContain("Ada Lovelace")
    await page.getByRole("button", { name: "Menu" }).click()
    await nav("Texting registration").click()
    await page.getByLabel("Brand name customers see").fill("Other Shop")
    await page.getByLabel("Contact email").fill("not-an-email")
    await page.getByRole("button", { name: "File registration" }).click()
    // The server's own words, under the fields they are about.
    await page.getByText("must be an email address").waitFor()
    expect(await page.getByLabel("Contact email").getAttribute("aria-invalid")).toBe("true")
    await accessible("registration errors")
    await page.setViewportSize(DESKTOP)
  })

  it("hides developer settings from a `member`, and the API refuses them", async () => {
    const memberContext = await browser.newContext({ viewport: DESKTOP })
    memberContext.setDefaultTimeout(60_000)
    const p = await memberContext.newPage()
    {
      await signIn(p, SAM)
      await p.getByRole("heading", { name: "Inbox" }).waitFor()
      const links = await p.getByRole("navigation", { name: "Console" }).getByRole("link").allTextContents()
      expect(links).toEqual(expect.arrayContaining(["Inbox", "Contacts"]))
      expect(links).not.toContain("Developer settings")
      expect(links).not.toContain("Numbers")
      await p.goto(`${base}/app/developers`)
      await p.getByRole("heading", { name: "Not available" }).waitFor()
      const status = await p.evaluate(async () =>
        (await fetch("/v1/app/tools/keys_list", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}"
        })).status
      )
      expect(status).toBe(403)
    }
    await memberContext.close()
  })
})
