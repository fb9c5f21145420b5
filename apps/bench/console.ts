/**
 * `npm run bench:console`: the web console (apps/console, served at /app) as a member waits for it,
 * in Debian's headless Chromium driven by playwright-core, against the service on Postgres. Prints
 * and writes apps/bench/results/figures-console.json (headline figures) and console.json (every
 * load); it never asserts.
 *
 * The workspace: BENCH_THREADS threads over BENCH_ACTIVITIES activities (messagesSeed.ts), and one
 * thread of BENCH_THREAD_ACTIVITIES activities, the newest in the inbox: texts both ways, calls
 * answered by the AI agent with a recording, transcript and summary, voicemails, and internal notes
 * by the signed-in member. Its contact is made through the API; the rest is inserted with SQL.
 *
 * Two screens, each opened at 1280x860 by the workspace's owner, signed in through the mailed link:
 * - the inbox (`/app/inbox`): done when the list shows its first page of open conversations;
 * - the thread (`/app/inbox/<id>`, beside the list): done when the list shows and the timeline ends
 *   with the thread's newest activity, scrolled into view, with the reply box.
 * Each is loaded BENCH_LOADS times with a cold cache (a new browser context: no cached script,
 * stylesheet or compiled code; only the session cookie) and with a warm one (a new tab in a context
 * that has loaded the screen before).
 *
 * Time to interactive, measured in the page from navigation start (performance.timeOrigin): the
 * later of
 * 1. content shown: the first frame painted with the screen's content, as above (checked each
 *    animation frame; the time is taken in a task posted from that frame's requestAnimationFrame,
 *    which runs once the frame is painted);
 * 2. the end of the last long task (PerformanceObserver `longtask`: a task over 50 ms, during which
 *    the page answers no input) before a window of BENCH_QUIET ms free of long tasks.
 * The quiet window begins no earlier than input answered: as soon as the driver sees (1), it presses
 * a key (the thread: a letter typed into the reply box; the inbox: Tab), and the frame after the
 * key's handlers must be painted. That key's delay (keydown to that frame) is printed beside; its
 * moment is not part of the figure, as it includes the driver's own reaction time.
 *
 * Baseline: what the person would otherwise wait for, the API answers the screen is built from. The
 * requests the console sent on a warm-up load (the same methods, paths and bodies: /v1/app/me, the
 * tool list, members_list, conversations_list and, for the thread, conversations_get; not the event
 * stream), sent all at once with fetch from a page of the same origin with the same session cookie,
 * in the same kind of context (cold or warm), timed in the page from the first request to the last
 * answer read and parsed. Loads and baselines alternate. The same requests one after another, in
 * the order the console sent them, are printed beside it.
 *
 * Env: BENCH_THREADS (3000), BENCH_ACTIVITIES (30000), BENCH_THREAD_ACTIVITIES (1000), BENCH_LOADS
 * (9), BENCH_QUIET (1000), CHROMIUM_PATH (/usr/bin/chromium), BENCH_DATABASE_URL; BENCH_TRACE=<prefix>
 * writes a Chromium trace of one warm load of each screen to <prefix>-<screen>.json (chrome://tracing
 * or the DevTools Performance panel open it).
 */
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { searchableText } from "../../core/conversations/model.ts"
import { type Figure, writeFigures } from "./figures.ts"
import {
  benchDir,
  call,
  cleanupStack,
  firstBoot,
  fmt,
  freePort,
  intEnv,
  log,
  percentile,
  root,
  runMain,
  startChild
} from "./harness.ts"
import { participant, seedMessages, textGen } from "./messagesSeed.ts"

const THREADS = intEnv("BENCH_THREADS", 3000)
const ACTIVITIES = intEnv("BENCH_ACTIVITIES", 30_000)
const THREAD_ACTIVITIES = intEnv("BENCH_THREAD_ACTIVITIES", 1000)
const LOADS = intEnv("BENCH_LOADS", 9)
const QUIET = intEnv("BENCH_QUIET", 1000)
const CHROMIUM = [process.env["CHROMIUM_PATH"], "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && existsSync(p)
)
const NUMBER = "+14155550100"
const VIEWPORT = { width: 1280, height: 860 }
/** The console's first page of the list (apps/console/screens/inbox.tsx). */
const LIST_PAGE = 50
/** The long thread's newest activity, a text: the thread screen is shown once it is in view. */
const NEWEST = "Running ten minutes late, see you at the shop soon."

// ---- The long thread ----------------------------------------------------------------------------

const INSERT_ACTIVITIES = `
INSERT INTO activities (workspace_id, id, conversation_id, type, direction, author_uid, body, media, delivery_status,
                        carrier_message_id, call, ai_tags, call_transcript, created_at, search)
SELECT $1::uuid, id, $2::uuid, type, dir, au, body, media::jsonb, ds, NULL, call::jsonb, '[]'::jsonb, tr::jsonb,
       at::timestamptz, to_tsvector('simple', st)
FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
            $12::text[], $13::text[])
  AS u(id, type, dir, au, body, media, ds, call, tr, at, st)`

/**
 * `count` activities over the last 180 days, the newest ten minutes ago: every 100th an internal
 * note by `memberId`, 5% calls answered by the agent (recording, transcript, summary), 1% missed
 * calls with a voicemail, the rest texts (45% inbound). The stored shapes are the app's
 * (core/calls/model.ts CallDetails, the recording's media as core/calls/carrierEvents.ts stores it).
 */
const seedLongThread = async (
  db: FirstBootDb,
  o: { workspaceId: string; inboxId: string; contactId: string; phone: string; memberId: string; count: number }
) => {
  const gen = textGen(5000, 4242)
  const { rnd } = gen
  const threadId = randomUUID()
  const end = Date.now() - 10 * 60_000
  const step = (180 * 24 * 3600_000) / o.count
  const cols = {
    id: [] as Array<string>,
    type: [] as Array<string>,
    dir: [] as Array<string | null>,
    au: [] as Array<string | null>,
    body: [] as Array<string | null>,
    media: [] as Array<string>,
    ds: [] as Array<string | null>,
    call: [] as Array<string | null>,
    tr: [] as Array<string | null>,
    at: [] as Array<string>,
    st: [] as Array<string>
  }
  let preview: string | null = null
  let lastInbound = false
  for (let i = 0; i < o.count; i++) {
    const id = randomUUID()
    const at = new Date(end - (o.count - 1 - i) * step).toISOString()
    const kind = rnd()
    let type = "message"
    let dir: string | null = rnd() < 0.45 ? "inbound" : "outbound"
    let author: string | null = null
    let body: string | null = null
    let media: Array<unknown> = []
    let ds: string | null = null
    let call: Record<string, unknown> | null = null
    let transcript: ReturnType<typeof gen.transcript> | null = null
    const callOf = (status: "completed" | "missed", durationSeconds: number, summary: string | null) => ({
      status,
      from: o.phone,
      to: NUMBER,
      durationSeconds,
      answeredBy: status === "completed" ? "agent" : null,
      agentId: null,
      memberUid: null,
      forwardedTo: null,
      carrierCallId: `v3:bench-${i}`,
      summary,
      job: null,
      endedAt: new Date(Date.parse(at) + durationSeconds * 1000).toISOString()
    })
    const recording = (filename: string, seconds: number) => [
      { key: `call_${id}.mp3`, contentType: "audio/mpeg", size: seconds * 16_000, filename }
    ]
    if (i === o.count - 1) {
      dir = "inbound"
      body = NEWEST
      ds = "received"
      preview = body
    } else if (i % 100 === 50) {
      type = "internal_note"
      dir = null
      author = o.memberId
      body = gen.sentence(6, 24)
    } else if (kind < 0.05) {
      type = "call"
      dir = "inbound"
      transcript = gen.transcript()
      const seconds = transcript[transcript.length - 1]!.offsetSeconds + 10
      call = callOf("completed", seconds, gen.sentence(10, 30))
      media = recording("recording.mp3", seconds)
    } else if (kind < 0.06) {
      type = "voicemail"
      dir = "inbound"
      const seconds = 5 + Math.floor(rnd() * 50)
      transcript = [{ speaker: "caller", text: gen.sentence(6, 30), offsetSeconds: 0 }]
      call = callOf("missed", seconds, null)
      media = recording("voicemail.mp3", seconds)
    } else {
      body = gen.body()
      ds = dir === "inbound" ? "received" : rnd() < 0.97 ? "delivered" : "failed"
      preview = body.slice(0, 160)
    }
    if (type !== "internal_note") lastInbound = dir === "inbound"
    cols.id.push(id)
    cols.type.push(type)
    cols.dir.push(dir)
    cols.au.push(author)
    cols.body.push(body)
    cols.media.push(JSON.stringify(media))
    cols.ds.push(ds)
    cols.call.push(call === null ? null : JSON.stringify(call))
    cols.tr.push(transcript === null ? null : JSON.stringify(transcript))
    cols.at.push(at)
    cols.st.push(searchableText({ body, callTranscript: transcript }))
  }
  await db.query(
    `INSERT INTO threads (workspace_id, id, inbox_id, number_e164, participant, contact_id, status, assignee_uid,
                          last_activity_at, preview, unread, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'open', NULL, $7, $8, $9, $10)`,
    [
      o.workspaceId,
      threadId,
      o.inboxId,
      NUMBER,
      o.phone,
      o.contactId,
      cols.at.at(-1),
      preview,
      lastInbound ? 2 : 0,
      cols
        .at[0]
    ]
  )
  await db.query(INSERT_ACTIVITIES, [
    o.workspaceId,
    threadId,
    cols.id,
    cols.type,
    cols.dir,
    cols.au,
    cols.body,
    cols.media,
    cols.ds,
    cols.call,
    cols.tr,
    cols.at,
    cols.st
  ])
  const mix = cols.type.reduce<Record<string, number>>((m, t) => ({ ...m, [t]: (m[t] ?? 0) + 1 }), {})
  return { threadId, mix }
}

type FirstBootDb = Awaited<ReturnType<typeof firstBoot>>["db"]

// ---- In the page --------------------------------------------------------------------------------
// Plain JavaScript in strings: tsx keeps function names with a helper the page does not have.

/**
 * Runs in every page before its scripts: records long tasks, the first keydown and the frame painted
 * after it, and the first frame painted with the screen's content (`window.__bench`).
 */
const probe = (newest: string, listItems: number) =>
  `(() => {
  const b = (window.__bench = { longTasks: [], shown: null, keyAt: null, keyPainted: null })
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) b.longTasks.push([e.startTime, e.startTime + e.duration])
    }).observe({ type: "longtask", buffered: true })
  } catch (e) { b.noLongTasks = String(e) }
  const afterPaint = (f) => requestAnimationFrame(() => {
    const c = new MessageChannel()
    c.port1.onmessage = () => f(performance.now())
    c.port2.postMessage(0)
  })
  addEventListener("keydown", (e) => {
    if (b.keyAt !== null) return
    b.keyAt = e.timeStamp
    afterPaint((t) => { b.keyPainted = t })
  }, true)
  const thread = /^\\/app\\/inbox\\/[^/]+$/.test(location.pathname)
  const count = (s) => document.querySelectorAll(s).length
  const ready = () => {
    if (count('ul[aria-label="Open conversations"] > li') < ${listItems}) return false
    if (!thread) return true
    const items = document.querySelectorAll('ol[aria-label="Timeline, oldest first"] > li')
    const last = items[items.length - 1]
    if (last === undefined || !last.textContent.includes(${JSON.stringify(newest)})) return false
    if (document.querySelector("form.composer textarea") === null) return false
    const r = last.getBoundingClientRect()
    return r.top < innerHeight && r.bottom > 0
  }
  const frame = () => {
    if (!ready()) return requestAnimationFrame(frame)
    afterPaint((t) => { b.shown = t })
  }
  requestAnimationFrame(frame)
})()`

/** The requests of `window.__requests` at once, then one after another; ms from the first sent to the last parsed. */
const BASELINE = `(async () => {
  const send = async (r) => {
    const res = await fetch(r.path, {
      method: r.method,
      credentials: "same-origin",
      headers: r.body === null ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      body: r.body
    })
    const text = await res.text()
    if (!res.ok) throw new Error(r.method + " " + r.path + " answered " + res.status + ": " + text.slice(0, 200))
    JSON.parse(text)
    return text.length
  }
  const rs = window.__requests
  let t = performance.now()
  const sizes = await Promise.all(rs.map(send))
  const parallel = performance.now() - t
  t = performance.now()
  for (const r of rs) await send(r)
  const serial = performance.now() - t
  return { parallel, serial, bytes: sizes.reduce((a, b) => a + b, 0) }
})()`

interface Bench {
  readonly longTasks: ReadonlyArray<readonly [number, number]>
  readonly shown: number | null
  readonly keyAt: number | null
  readonly keyPainted: number | null
  readonly noLongTasks?: string
}

interface Load {
  readonly shown: number
  readonly keyAt: number
  readonly keyPainted: number
  readonly lastLongTaskEnd: number
  readonly longTaskMs: number
  readonly longTasks: number
  /** When the last API answer the console asked for had arrived (resource timing). */
  readonly dataAt: number
  /** When the console sent its first API request. */
  readonly askedAt: number
  readonly htmlAt: number
  readonly tti: number
}

interface Baseline {
  readonly parallel: number
  readonly serial: number
  readonly bytes: number
}

interface Request {
  readonly method: string
  readonly path: string
  readonly body: string | null
}

const readBench = (page: Page) => page.evaluate("window.__bench") as Promise<Bench>

/** Opens `path` in a new tab of `context` and waits until it is interactive (the header's definition). */
const measureLoad = async (context: BrowserContext, base: string, path: string, key: string): Promise<Load> => {
  const page = await context.newPage()
  try {
    await page.goto(base + path, { waitUntil: "commit" })
    // Functions, not strings: the console's CSP refuses eval (tsx names nothing in an anonymous arrow).
    await page.waitForFunction(() => (window as any).__bench?.shown != null, undefined, {
      timeout: 120_000,
      polling: "raf"
    })
    if (key !== "Tab") await page.evaluate(`document.querySelector("form.composer textarea").focus()`)
    await page.keyboard.press(key)
    await page.waitForFunction(() => (window as any).__bench.keyPainted !== null, undefined, { timeout: 60_000 })
    // Until BENCH_QUIET ms have passed without a long task since the later of (1) and (2).
    let bench: Bench
    let settled: number
    for (;;) {
      bench = await readBench(page)
      const now = (await page.evaluate("performance.now()")) as number
      settled = Math.max(bench.shown!, ...bench.longTasks.map(([, endAt]) => endAt))
      if (now - Math.max(settled, bench.keyPainted!) >= QUIET) break
      await page.waitForTimeout(100)
    }
    if (bench.noLongTasks !== undefined) throw new Error(`no longtask entries in this Chromium: ${bench.noLongTasks}`)
    const timing = (await page.evaluate(`(() => {
      const nav = performance.getEntriesByType("navigation")[0]
      const api = performance.getEntriesByType("resource")
        .filter((e) => e.initiatorType === "fetch" && new URL(e.name).pathname.startsWith("/v1/app/"))
      return {
        htmlAt: nav.responseEnd,
        askedAt: Math.min(...api.map((e) => e.startTime)),
        dataAt: Math.max(0, ...api.map((e) => e.responseEnd))
      }
    })()`)) as { htmlAt: number; askedAt: number; dataAt: number }
    return {
      shown: bench.shown!,
      keyAt: bench.keyAt!,
      keyPainted: bench.keyPainted!,
      lastLongTaskEnd: Math.max(0, ...bench.longTasks.map(([, endAt]) => endAt)),
      longTaskMs: bench.longTasks.reduce((sum, [s, e]) => sum + e - s, 0),
      longTasks: bench.longTasks.length,
      dataAt: timing.dataAt,
      askedAt: timing.askedAt,
      htmlAt: timing.htmlAt,
      tti: settled
    }
  } finally {
    await page.close()
  }
}

/** The API requests (not the event stream) the console sends while opening `path`, on a load not measured. */
const recordRequests = async (context: BrowserContext, base: string, path: string, key: string) => {
  const requests: Array<Request> = []
  const listener = (r: { url: () => string; method: () => string; postData: () => string | null }) => {
    const url = new URL(r.url())
    if (url.pathname.startsWith("/v1/app/") && url.pathname !== "/v1/app/events") {
      requests.push({ method: r.method(), path: url.pathname + url.search, body: r.postData() })
    }
  }
  context.on("request", listener)
  try {
    await measureLoad(context, base, path, key)
  } finally {
    context.off("request", listener)
  }
  return requests
}

const measureBaseline = async (context: BrowserContext, base: string, requests: ReadonlyArray<Request>) => {
  const page = await context.newPage()
  try {
    // A page of the same origin that does not run the console.
    await page.goto(`${base}/v1/app/me`)
    await page.evaluate(`window.__requests = ${JSON.stringify(requests)}`)
    return (await page.evaluate(BASELINE)) as Baseline
  } finally {
    await page.close()
  }
}

// ---- Main ---------------------------------------------------------------------------------------

interface Case {
  readonly name: string
  readonly label: string
  readonly path: string
  readonly key: string
}

const stats = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), max: sorted.at(-1)! }
}

const main = async () => {
  const startedAt = new Date()
  if (CHROMIUM === undefined) throw new Error("no Chromium at /usr/bin/chromium: set CHROMIUM_PATH")
  const cleanups = cleanupStack()
  try {
    // The console as `npm start` builds it (a no-op when it is up to date).
    execFileSync(process.execPath, ["apps/server/build.mjs", "console"], { cwd: root, stdio: "inherit" })
    const { adminToken, boot, db, serviceEnv, workspaceId } = await firstBoot(cleanups, {
      database: "switchboard_bench_console",
      prefix: "benchconsole"
    })
    const admin = { authorization: `Bearer ${adminToken}` }
    const added = await call(
      boot.port,
      "POST",
      `/v1/admin/workspaces/${workspaceId}/numbers`,
      admin,
      JSON.stringify({ e164: NUMBER })
    )
    if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)
    await boot.stop()
    const inboxId =
      (await db.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])).rows[0]!.inbox_id

    const seedStart = performance.now()
    log(`seeding ${fmt(ACTIVITIES)} activities over ${fmt(THREADS)} threads`)
    await seedMessages(db, {
      workspaceId,
      inboxId,
      numberE164: NUMBER,
      messages: ACTIVITIES,
      threads: THREADS,
      batchSize: 10_000,
      vocabSize: 5000,
      log: (l) => log(`  ${l}`)
    })

    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const service = await startChild(
      "service",
      "apps/server/node.ts",
      { ...serviceEnv, PUBLIC_BASE_URL: base },
      port
    )
    cleanups.push(service.stop)
    const key = /svc_test_[0-9A-Za-z]{40}/.exec(boot.output())![0]
    const phone = participant(THREADS)
    const contact = await call(
      port,
      "POST",
      "/v1/api/contacts",
      { authorization: `Bearer ${key}` },
      JSON.stringify({ firstName: "Dana", lastName: "Whitfield", phone })
    )
    if (contact.status !== 201) throw new Error(`create contact: ${contact.status} ${contact.body}`)
    const members = JSON.parse((await call(port, "GET", `/v1/admin/workspaces/${workspaceId}/members`, admin)).body)
    const owner = members.members[0] as { id: string; email: string }
    const { threadId, mix } = await seedLongThread(db, {
      workspaceId,
      inboxId,
      contactId: JSON.parse(contact.body).contact.id,
      phone,
      memberId: owner.id,
      count: THREAD_ACTIVITIES
    })
    await db.query("VACUUM (ANALYZE) activities")
    const open = Number(
      (await db.query<{ n: string }>("SELECT count(*) AS n FROM threads WHERE workspace_id = $1 AND status = 'open'", [
        workspaceId
      ])).rows[0]!.n
    )
    const seedSeconds = (performance.now() - seedStart) / 1000
    log(
      `seeded in ${seedSeconds.toFixed(1)} s: ${fmt(THREADS + 1)} threads (${fmt(open)} open), the long thread ${
        JSON.stringify(mix)
      }`
    )

    // Chromium, and the owner signed in through the mailed link.
    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
    cleanups.push(() => browser.close())
    const signInContext = await browser.newContext({ viewport: VIEWPORT })
    const signInPage = await signInContext.newPage()
    await signInPage.goto(`${base}/app`)
    await signInPage.getByLabel("Email address").fill(owner.email)
    await signInPage.getByRole("button", { name: "Email me a sign-in link" }).click()
    await signInPage.getByRole("heading", { name: "Check your mail" }).waitFor()
    let link: string | undefined
    for (let tries = 0; link === undefined && tries < 300; tries++) {
      const mail = JSON.parse((await call(port, "GET", `/v1/admin/workspaces/${workspaceId}/mail`, admin)).body).mail
      link = /\/app\/sign-in\/[A-Za-z0-9_-]+/.exec(mail.find((m: { to: string }) => m.to === owner.email)?.text ?? "")
        ?.[0]
      if (link === undefined) await signInPage.waitForTimeout(100)
    }
    if (link === undefined) throw new Error("no sign-in link mailed")
    await signInPage.goto(base + link)
    await signInPage.getByRole("heading", { name: "Inbox" }).waitFor()
    const storageState = await signInContext.storageState()
    await signInContext.close()

    const script = probe(NEWEST, Math.min(LIST_PAGE, open))
    const newContext = async () => {
      const context = await browser.newContext({ viewport: VIEWPORT, storageState })
      await context.addInitScript(script)
      return context
    }
    const cases: ReadonlyArray<Case> = [
      { name: "inbox", label: `the inbox's first load (${fmt(THREADS + 1)} threads)`, path: "/app/inbox", key: "Tab" },
      {
        name: "thread",
        label: `a thread of ${fmt(THREAD_ACTIVITIES)} activities, beside the inbox`,
        path: `/app/inbox/${threadId}`,
        key: "x"
      }
    ]

    const loadBefore = loadavg()
    type Runs = Record<"cold" | "warm", { loads: Array<Load>; baselines: Array<Baseline> }>
    const results: Record<string, Runs> = {}
    let requestsByCase: Record<string, ReadonlyArray<Request>> = {}
    for (const c of cases) {
      const warm = await newContext()
      cleanups.push(() => warm.close())
      const requests = await recordRequests(warm, base, c.path, c.key)
      if (process.env["BENCH_TRACE"] !== undefined) {
        const tp = await warm.newPage()
        await browser.startTracing(tp, {
          categories: [
            "devtools.timeline",
            "disabled-by-default-devtools.timeline",
            "disabled-by-default-v8.cpu_profiler"
          ]
        })
        await tp.goto(base + c.path)
        await tp.waitForFunction(() => (window as any).__bench?.shown != null, undefined, { timeout: 120_000 })
        await tp.waitForTimeout(2000)
        writeFileSync(`${process.env["BENCH_TRACE"]}-${c.name}.json`, await browser.stopTracing())
        await tp.close()
      }
      requestsByCase = { ...requestsByCase, [c.name]: requests }
      log(`${c.name}: the console sends ${requests.map((r) => `${r.method} ${r.path}`).join(", ")}`)
      // Both kinds of context once more before measuring (a first load compiles the server's paths too).
      await measureBaseline(warm, base, requests)
      const r: Runs = { cold: { loads: [], baselines: [] }, warm: { loads: [], baselines: [] } }
      for (let i = 0; i < LOADS; i++) {
        const cold = await newContext()
        r.cold.loads.push(await measureLoad(cold, base, c.path, c.key))
        await cold.close()
        const coldBase = await newContext()
        r.cold.baselines.push(await measureBaseline(coldBase, base, requests))
        await coldBase.close()
        r.warm.loads.push(await measureLoad(warm, base, c.path, c.key))
        r.warm.baselines.push(await measureBaseline(warm, base, requests))
        const last = r.cold.loads.at(-1)!
        log(
          `  ${c.name} ${i + 1}/${LOADS}: cold ${fmt(last.tti)} ms (shown ${fmt(last.shown)}, data ${
            fmt(last.dataAt)
          }, API ${fmt(r.cold.baselines.at(-1)!.parallel)}), warm ${fmt(r.warm.loads.at(-1)!.tti)} ms (API ${
            fmt(r.warm.baselines.at(-1)!.parallel)
          })`
        )
      }
      results[c.name] = r
      await warm.close()
    }
    const loadAfter = loadavg()
    const host = `load average ${loadBefore[0]!.toFixed(2)} -> ${loadAfter[0]!.toFixed(2)}`

    const figures: Array<Figure> = []
    log()
    log(`time to interactive (ms from navigation start; baseline: the same API requests at once from the page)`)
    for (const c of cases) {
      for (const cache of ["cold", "warm"] as const) {
        const { baselines, loads } = results[c.name]![cache]
        const tti = stats(loads.map((l) => l.tti))
        const api = stats(baselines.map((b) => b.parallel))
        const serial = stats(baselines.map((b) => b.serial))
        const shown = stats(loads.map((l) => l.shown))
        const asked = stats(loads.map((l) => l.askedAt))
        const data = stats(loads.map((l) => l.dataAt))
        const keyDelay = stats(loads.map((l) => l.keyPainted - l.keyAt))
        const longTasks = stats(loads.map((l) => l.longTaskMs))
        log(
          `${c.name}, ${cache} cache: p50 ${fmt(tti.p50)} max ${fmt(tti.max)} | API at once p50 ${fmt(api.p50)} max ${
            fmt(api.max)
          }, one after another p50 ${fmt(serial.p50)} | first request sent p50 ${fmt(asked.p50)}, shown p50 ${
            fmt(shown.p50)
          }, last answer in p50 ${fmt(data.p50)}, key to paint p50 ${fmt(keyDelay.p50)}, long tasks p50 ${
            fmt(longTasks.p50)
          } ms`
        )
        for (const [stat, label] of [["p50", "p50"], ["max", "max"]] as const) {
          figures.push({
            figure: `console time to interactive, ${c.label}, ${cache} cache, ${label}`,
            value: tti[stat],
            unit: "ms",
            baseline: { label: "the same API requests at once, fetched in the page", value: api[stat] },
            ratio: api[stat] / tti[stat]
          })
        }
      }
    }
    log(host)

    writeFigures({ benchmark: "console", startedAt: startedAt.toISOString(), host, figures })
    mkdirSync(join(benchDir, "results"), { recursive: true })
    writeFileSync(
      join(benchDir, "results", "console.json"),
      JSON.stringify(
        {
          startedAt: startedAt.toISOString(),
          host,
          loadavg: { before: loadBefore, after: loadAfter },
          settings: { THREADS, ACTIVITIES, THREAD_ACTIVITIES, LOADS, QUIET, VIEWPORT },
          seedSeconds,
          longThread: mix,
          requests: requestsByCase,
          results
        },
        null,
        2
      ) + "\n"
    )
  } finally {
    await cleanups.run()
  }
}

runMain(main)
