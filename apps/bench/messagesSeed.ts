/**
 * Bulk seeding for the messaging benchmark: contacts, threads and activities (SMS and calls with
 * transcripts) for one workspace number, inserted with `INSERT ... SELECT FROM unnest(...)` in
 * batches, with the GIN index on `activities.search` dropped around the load (as seed.ts does for
 * contacts), then VACUUM (ANALYZE).
 *
 * Text is English-ish: a ranked vocabulary of a few thousand words (function words, business words,
 * names, inflections, then invented words for the rare tail) drawn with a Zipf distribution, so some
 * words are in most messages and some in a handful. `search` is exactly what the app stores:
 * `to_tsvector('simple', searchableText(activity))` (core/conversations/model.ts), computed from the
 * same JS string. Deterministic (seeded PRNG) apart from ids.
 */
import { randomUUID } from "node:crypto"
import type pg from "pg"
import { searchDigits, searchText } from "../../core/contacts/rules.ts"
import { previewOf, searchableText } from "../../core/conversations/model.ts"
import { beginBulkLoad, pools, rebuildIndexes } from "./seed.ts"

// ---- PRNG and Zipf ------------------------------------------------------------------------------

/** mulberry32: small, fast, deterministic. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Sampler of ranks 0..n-1 with P(r) proportional to 1/(r+1)^s (inverse CDF, binary search). */
export const zipf = (n: number, s: number) => {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let r = 0; r < n; r++) {
    sum += 1 / Math.pow(r + 1, s)
    cdf[r] = sum
  }
  for (let r = 0; r < n; r++) cdf[r]! /= sum
  return (u: number) => {
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

// ---- Vocabulary ---------------------------------------------------------------------------------

/** Roughly in order of frequency in business texting. */
const COMMON = `
the you to i a and for your is it we on be at of in can have will me this that my are with do just not so if please
thanks hi get know what up no yes ok all there was call time out our us now when today tomorrow back let here how need
see would could thank good great one about from an or they them he she but as by like want going got still any some
more next well also send sent text message day week morning afternoon evening tonight hey hello sure sounds perfect
appointment order delivery pickup payment invoice schedule confirm confirmed reminder available booking booked
reschedule cancel cancelled update quote estimate price total balance due account service team office store shop
phone number email address location open closed hours monday tuesday wednesday thursday friday saturday sunday
minutes hour pm am ready arrive arriving arrived on way running late early soon asap left right check checking
question questions help issue problem fixed done work working job visit technician driver package shipped tracking
receipt card paid deposit refund discount offer new customer client patient guest table reservation room menu
`

const BUSINESS = `
dentist cleaning checkup prescription pharmacy insurance claim policy coverage copay referral doctor nurse clinic
lab results test scan xray surgery recovery therapy session consultation follow followup plan treatment
plumber leak pipe faucet toilet drain heater furnace boiler ac unit filter vent duct roof gutter window door lock key
garage driveway lawn yard tree fence deck paint painting drywall floor carpet tile kitchen bathroom basement attic
electrician outlet breaker panel wiring light fixture install installation repair replace replacement inspection permit
contractor crew materials lumber concrete estimate warranty parts labor
car truck van vehicle oil tire tires brake brakes engine battery transmission alignment rotation detail wash
mechanic dealership lease loan financing trade title registration
haircut color trim blowout nails manicure pedicure massage facial wax stylist salon spa barber
dinner lunch breakfast brunch catering party event wedding birthday anniversary celebration cake flowers bouquet
delivery address apartment unit suite building gate code lobby front desk buzzer parking lot street avenue
contract agreement signature sign signed document documents form forms copy scan upload attachment link portal
login password reset verify verification code security
listing showing property house home condo rent lease tenant landlord move moving movers storage closing offer
inspection appraisal mortgage escrow agent broker
class lesson tutor training coach practice game tournament registration membership gym studio yoga pilates
shipment freight pallet warehouse inventory stock supplier vendor wholesale retail sample samples catalog
subscription renewal plan upgrade downgrade billing charge charged credit debit bank transfer wire check cash
tax taxes return accountant bookkeeping payroll
pet dog cat vet vaccine grooming boarding walk
feedback review rating survey experience recommend satisfied unhappy sorry apologize apologies inconvenience
`

const CONVERSATIONAL = `
really actually definitely probably maybe think thought said told asked wanted needed trying try tried make made
give gave take took come came go went tell look looking find found keep kept put bring brought leave stay wait waiting
meet meeting talk talked speak spoke hear heard feel felt mean meant use used pay paying buy bought sell sold ship
start started finish finished stop stopped change changed move moved pick picked drop dropped fix reach reached
happy glad love nice awesome amazing excellent fine bad sick busy free late quick quickly fast slow little big small
long short last first second third few many much every each other another same different whole half full
already yet again always never sometimes often usually soon later earlier ago since until before after during
because though although however anyway instead either neither both whether while
morning noon midnight weekend holiday month year january february march april may june july august september
october november december spring summer fall winter
`

const NAMES_AND_PLACES = `
main oak pine maple cedar elm park lake hill river ridge valley bay harbor union market broadway mission
downtown uptown midtown northside southside eastside westside airport station mall plaza center
brooklyn queens boston chicago seattle portland denver austin dallas houston miami atlanta phoenix oakland berkeley
sacramento sandiego losangeles sanjose fresno tacoma spokane boise reno tucson albuquerque omaha tulsa memphis
nashville louisville richmond raleigh charlotte tampa orlando jacksonville pittsburgh cleveland detroit milwaukee
`

const VERB_STEMS = `
call text email confirm schedule book cancel deliver ship order pay charge refund return install repair replace
inspect clean check update send sign upload review approve process finish start open close pick drop move print
scan follow remind visit contact invoice quote estimate`.trim().split(/\s+/)

const NOUN_STEMS = `
appointment order delivery payment invoice reminder booking quote estimate customer client patient guest reservation
package receipt card refund discount offer technician driver document form contract signature listing showing tenant
class lesson session membership shipment sample subscription charge review rating visit question issue problem
`.trim().split(/\s+/)

const SYLLABLES = `ka ri to mel an dor vi sen pra lo tu bel gar nis qua ze fen har ol mi ras cor den lu vak pel sto
tri mon zu rav ek il fa neb sar gol pin tev orm bra cu dix ver yal hop jun kel`.trim().split(/\s+/)

/** Ranked vocabulary of `size` distinct lower-case words (real words first, invented rare tail). */
export const vocabulary = (size: number): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const out: Array<string> = []
  const add = (w: string) => {
    if (w.length > 0 && !seen.has(w)) {
      seen.add(w)
      out.push(w)
    }
  }
  for (const block of [COMMON, BUSINESS, CONVERSATIONAL]) for (const w of block.trim().split(/\s+/)) add(w)
  for (const n of pools.firstAscii) add(n)
  for (const w of NAMES_AND_PLACES.trim().split(/\s+/)) add(w)
  for (const n of pools.lastAscii) add(n)
  for (const v of VERB_STEMS) {
    const base = v.endsWith("e") ? v.slice(0, -1) : v
    add(`${v}s`)
    add(`${base}ed`)
    add(`${base}ing`)
  }
  for (const n of NOUN_STEMS) add(n.endsWith("s") ? `${n}es` : `${n}s`)
  // invented words: product names, streets, brands, typos; the rare tail
  const rnd = prng(7)
  while (out.length < size) {
    const parts = 2 + Math.floor(rnd() * 2)
    let w = ""
    for (let i = 0; i < parts; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)]
    add(w)
  }
  return out.slice(0, size)
}

// ---- Text generation ----------------------------------------------------------------------------

const capitalize = (s: string) => (s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1))
const FIRST_NAMES = pools.first
const SHORT_REPLIES = [
  "ok",
  "Ok!",
  "Yes",
  "yes please",
  "No thanks",
  "Thanks!",
  "Thank you",
  "sounds good",
  "see you then",
  "👍",
  "Perfect, thanks",
  "Got it",
  "Will do",
  "STOP",
  "Confirmed"
]

export interface TextGen {
  readonly vocab: ReadonlyArray<string>
  readonly sentence: (minWords: number, maxWords: number) => string
  readonly body: () => string
  readonly transcript: () => Array<{ speaker: "agent" | "caller"; text: string; offsetSeconds: number }>
  readonly rnd: () => number
}

export const textGen = (vocabSize: number, seed: number): TextGen => {
  const vocab = vocabulary(vocabSize)
  const rnd = prng(seed)
  const pick = zipf(vocab.length, 1.05)
  const word = () => vocab[pick(rnd())]!
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1))
  const sentence = (minWords: number, maxWords: number) => {
    const n = int(minWords, maxWords)
    const ws: Array<string> = []
    for (let i = 0; i < n; i++) ws.push(word())
    if (n > 6 && rnd() < 0.4) ws[int(2, n - 2)] += ","
    return capitalize(ws.join(" ")) + (rnd() < 0.15 ? "?" : rnd() < 0.2 ? "!" : ".")
  }
  const time = () => `${int(1, 12)}:${rnd() < 0.5 ? "00" : "30"}${rnd() < 0.5 ? "am" : "pm"}`
  const body = () => {
    const kind = rnd()
    if (kind < 0.1) return SHORT_REPLIES[int(0, SHORT_REPLIES.length - 1)]!
    if (kind < 0.4) {
      // templated business texts with Zipf filler
      switch (int(0, 5)) {
        case 0:
          return `Hi ${
            FIRST_NAMES[int(0, FIRST_NAMES.length - 1)]
          }, your ${word()} ${word()} is confirmed for ${word()} at ${time()}. Reply YES to confirm or call us to reschedule.`
        case 1:
          return `Order #${int(10000, 99999)}: ${sentence(4, 12)} Track it here: https://example.com/t/${
            int(100000, 999999)
          }`
        case 2:
          return `Reminder: ${sentence(5, 14)} See you ${word()}!`
        case 3:
          return `Your total is $${int(5, 900)}.${int(10, 99)}. ${sentence(4, 10)}`
        case 4:
          return `Hey ${FIRST_NAMES[int(0, FIRST_NAMES.length - 1)]}! ${sentence(3, 12)} ${sentence(3, 10)}`
        default:
          return `${sentence(3, 9)} Code ${int(1000, 9999)}.`
      }
    }
    const sentences = int(1, 3)
    const parts: Array<string> = []
    for (let i = 0; i < sentences; i++) parts.push(sentence(3, 18))
    return parts.join(" ")
  }
  const transcript = () => {
    const turns = int(2, 10)
    const out: Array<{ speaker: "agent" | "caller"; text: string; offsetSeconds: number }> = []
    let at = int(0, 3)
    for (let i = 0; i < turns; i++) {
      const text = sentence(4, 24)
      out.push({ speaker: i % 2 === 0 ? "agent" : "caller", text, offsetSeconds: at })
      at += int(3, 25)
    }
    return out
  }
  return { vocab, sentence, body, transcript, rnd }
}

// ---- Participants -------------------------------------------------------------------------------

/** Distinct US numbers that libphonenumber accepts as possible (fictional exchanges). */
export const participant = (i: number) => `+1${pools.areaCodes[i % pools.areaCodes.length]}${2_000_000 + i * 13}`

// ---- Seeding ------------------------------------------------------------------------------------

export interface MessageSeedOptions {
  readonly workspaceId: string
  readonly inboxId: string
  readonly numberE164: string
  readonly messages: number
  readonly threads: number
  readonly batchSize: number
  readonly vocabSize: number
  /** Threads seeded by earlier calls (default 0): this call's participants and texts follow theirs. */
  readonly threadsBefore?: number
  readonly log: (line: string) => void
}

export interface MessageSeedResult {
  readonly seconds: number
  readonly insertSeconds: number
  readonly indexSeconds: number
  readonly analyzeSeconds: number
  readonly calls: number
  readonly contacts: number
}

const INSERT_ACTIVITIES = `
INSERT INTO activities (workspace_id, id, conversation_id, type, direction, author_uid, body, media, delivery_status,
                        carrier_message_id, call, ai_tags, call_transcript, created_at, search)
SELECT $1::uuid, id, conv, type, dir, NULL, body, '[]'::jsonb, ds, NULL, call::jsonb, '[]'::jsonb, tr::jsonb, at::timestamptz,
       to_tsvector('simple', st)
FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
  AS u(id, conv, type, dir, body, ds, call, tr, at, st)`

const INSERT_THREADS = `
INSERT INTO threads (workspace_id, id, inbox_id, number_e164, participant, contact_id, status, assignee_uid, last_activity_at,
                     preview, unread, created_at)
SELECT $1::uuid, id, $2::uuid, $3, p, cid, st, NULL, la::timestamptz, pv, un, ca::timestamptz
FROM unnest($4::uuid[], $5::text[], $6::uuid[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[]) AS u(id, p, cid, st, la, pv, un, ca)`

const INSERT_CONTACTS = `
INSERT INTO contacts (workspace_id, id, first_name, last_name, company, phones, emails, notes, properties, tags, source,
                      created_at, updated_at, search_text, search_digits)
SELECT $1::uuid, id, fn, ln, co, ph::jsonb, em::jsonb, '[]'::jsonb, '{}'::jsonb, '[]'::jsonb, 'manual', ca::timestamptz, ca::timestamptz, stx, sdg
FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
  AS u(id, fn, ln, co, ph, em, ca, stx, sdg)`

interface ThreadState {
  id: string
  participant: string
  createdAt: string
  lastAt: string
  preview: string | null
  lastInbound: boolean
}

export const seedMessages = async (client: pg.Client, options: MessageSeedOptions): Promise<MessageSeedResult> => {
  const { workspaceId, inboxId, numberE164, messages, threads, batchSize, log } = options
  const start = performance.now()
  const gin = await beginBulkLoad(client, "activities", log)

  const threadsBefore = options.threadsBefore ?? 0
  const gen = textGen(options.vocabSize, 42 + threadsBefore)
  const { rnd } = gen
  const end = Date.now() - 60 * 60 * 1000
  const begin = end - 730 * 24 * 60 * 60 * 1000
  const step = (end - begin) / messages
  const openEvery = messages / threads
  const state: Array<ThreadState> = []
  let calls = 0

  const insertStart = performance.now()
  for (let from = 0; from < messages; from += batchSize) {
    const to = Math.min(messages, from + batchSize)
    const cols = {
      id: [] as string[],
      conv: [] as string[],
      type: [] as string[],
      dir: [] as string[],
      body: [] as (string | null)[],
      ds: [] as (string | null)[],
      call: [] as (string | null)[],
      tr: [] as (string | null)[],
      at: [] as string[],
      st: [] as string[]
    }
    for (let i = from; i < to; i++) {
      const at = new Date(Math.floor(begin + i * step + rnd() * step * 0.9)).toISOString()
      // a new thread opens every `openEvery` activities; otherwise recent threads are the busy ones
      let thread: ThreadState
      if (state.length < threads && i >= Math.floor(state.length * openEvery)) {
        thread = {
          id: randomUUID(),
          participant: participant(threadsBefore + state.length),
          createdAt: at,
          lastAt: at,
          preview: null,
          lastInbound: false
        }
        state.push(thread)
      } else {
        thread = state[state.length - 1 - Math.floor(state.length * Math.pow(rnd(), 3))]!
      }
      const kind = rnd()
      const inbound = rnd() < 0.45
      let body: string | null = null
      let transcript: ReturnType<TextGen["transcript"]> | null = null
      let type = "message"
      let call: string | null = null
      let ds: string | null = null
      if (kind < 0.07) {
        type = "call"
        transcript = gen.transcript()
        call = JSON.stringify({
          durationSeconds: transcript[transcript.length - 1]!.offsetSeconds + 10,
          outcome: "answered"
        })
        calls++
      } else if (kind < 0.09) {
        type = "voicemail"
        const text = gen.sentence(6, 30)
        transcript = [{ speaker: "caller", text, offsetSeconds: 0 }]
        call = JSON.stringify({ durationSeconds: 5 + Math.floor(rnd() * 60), outcome: "voicemail" })
        calls++
      } else {
        body = gen.body()
        ds = inbound ? "received" : rnd() < 0.97 ? "delivered" : "failed"
      }
      cols.id.push(randomUUID())
      cols.conv.push(thread.id)
      cols.type.push(type)
      cols.dir.push(type === "voicemail" ? "inbound" : inbound ? "inbound" : "outbound")
      cols.body.push(body)
      cols.ds.push(ds)
      cols.call.push(call)
      cols.tr.push(transcript === null ? null : JSON.stringify(transcript))
      cols.at.push(at)
      cols.st.push(searchableText({ body, callTranscript: transcript }))
      thread.lastAt = at
      thread.lastInbound = inbound || type === "voicemail"
      if (body !== null) thread.preview = previewOf(body, 0)
    }
    const t = performance.now()
    await client.query(INSERT_ACTIVITIES, [
      workspaceId,
      cols.id,
      cols.conv,
      cols.type,
      cols.dir,
      cols.body,
      cols.ds,
      cols.call,
      cols.tr,
      cols.at,
      cols.st
    ])
    const secs = (performance.now() - t) / 1000
    log(
      `activities ${to.toLocaleString("en-US")} / ${messages.toLocaleString("en-US")} (${
        Math.round((to - from) / secs).toLocaleString("en-US")
      } rows/s)`
    )
  }

  // contacts for 70% of the threads, then the threads themselves
  const contactIds = new Map<number, string>()
  const c = {
    id: [] as string[],
    fn: [] as (string | null)[],
    ln: [] as (string | null)[],
    co: [] as (string | null)[],
    ph: [] as string[],
    em: [] as string[],
    ca: [] as string[],
    stx: [] as string[],
    sdg: [] as string[]
  }
  state.forEach((th, i) => {
    if (rnd() >= 0.7) return
    const id = randomUUID()
    contactIds.set(i, id)
    const fi = Math.floor(pools.first.length * rnd() ** 2)
    const li = Math.floor(pools.last.length * rnd() ** 2)
    const firstName = pools.first[fi]!
    const lastName = rnd() < 0.9 ? pools.last[li]! : null
    const company = rnd() < 0.3 ? pools.company[Math.floor(pools.company.length * rnd())]! : null
    const emails = rnd() < 0.5
      ? [{ value: `${pools.firstAscii[fi]}.${pools.lastAscii[li]}@${pools.freeMail[i % pools.freeMail.length]}` }]
      : []
    const phones = [{ value: th.participant }]
    c.id.push(id)
    c.fn.push(firstName)
    c.ln.push(lastName)
    c.co.push(company)
    c.ph.push(JSON.stringify(phones))
    c.em.push(JSON.stringify(emails))
    c.ca.push(th.createdAt)
    c.stx.push(searchText({ firstName, lastName, company, emails }))
    c.sdg.push(searchDigits({ phones: phones as never }))
  })
  for (let from = 0; from < c.id.length; from += 10_000) {
    const s = <T>(xs: Array<T>) => xs.slice(from, from + 10_000)
    await client.query(INSERT_CONTACTS, [
      workspaceId,
      s(c.id),
      s(c.fn),
      s(c.ln),
      s(c.co),
      s(c.ph),
      s(c.em),
      s(c.ca),
      s(c.stx),
      s(c.sdg)
    ])
  }
  for (let from = 0; from < state.length; from += 10_000) {
    const chunk = state.slice(from, from + 10_000)
    await client.query(INSERT_THREADS, [
      workspaceId,
      inboxId,
      numberE164,
      chunk.map((t) => t.id),
      chunk.map((t) => t.participant),
      chunk.map((_, j) => contactIds.get(from + j) ?? null),
      chunk.map((t) => (t.lastInbound || rnd() < 0.15 ? "open" : "done")),
      chunk.map((t) => t.lastAt),
      chunk.map((t) => t.preview),
      chunk.map((t) => (t.lastInbound ? 1 + Math.floor(rnd() * 3) : 0)),
      chunk.map((t) => t.createdAt)
    ])
  }
  log(`threads ${state.length.toLocaleString("en-US")}, contacts ${c.id.length.toLocaleString("en-US")}`)
  const insertSeconds = (performance.now() - insertStart) / 1000

  const indexSeconds = await rebuildIndexes(client, gin, log)

  const analyzeStart = performance.now()
  await client.query("VACUUM (ANALYZE) activities")
  await client.query("VACUUM (ANALYZE) threads")
  await client.query("VACUUM (ANALYZE) contacts")
  const analyzeSeconds = (performance.now() - analyzeStart) / 1000
  log(`VACUUM (ANALYZE) activities, threads, contacts in ${analyzeSeconds.toFixed(1)} s`)
  return {
    seconds: (performance.now() - start) / 1000,
    insertSeconds,
    indexSeconds,
    analyzeSeconds,
    calls,
    contacts: c.id.length
  }
}
