/**
 * `npm run bench:rows`: a contact row mapped to its record, detail and summary (a list page's work per
 * row) by the schema-derived mappers (adapters/sql/rows.ts, core/kernel/records.ts) against the hand-written
 * ones they replaced (a5b15c5: toContact, toDetail, toSummary, copied below as the baseline). Both in
 * one process, alternating, so the host's load moves both alike. Prints figures; asserts nothing.
 */
import { contacts } from "../../adapters/sql/tables.ts"
import { toDetail, toSummary } from "../../core/contacts/model.ts"
type Row = Record<string, unknown>
const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString()
const json = <A>(v: unknown): A => (typeof v === "string" ? JSON.parse(v) : v) as A
const oldToContact = (r: Row) => ({
  id: String(r.id),
  workspaceId: String(r.workspace_id),
  firstName: (r.first_name as string | null) ?? null,
  lastName: (r.last_name as string | null) ?? null,
  company: (r.company as string | null) ?? null,
  phones: json<any>(r.phones),
  emails: json<any>(r.emails),
  notes: json<any>(r.notes),
  properties: json<any>(r.properties),
  tags: json<any>(r.tags),
  source: (r.source as string | null) ?? null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at)
})
const oldToDetail = (c: any) => ({
  id: c.id,
  firstName: c.firstName,
  lastName: c.lastName,
  company: c.company,
  phones: c.phones,
  emails: c.emails,
  notes: c.notes,
  properties: c.properties,
  tags: c.tags,
  source: c.source,
  createdAt: c.createdAt
})
const oldToSummary = (c: any) => ({
  id: c.id,
  firstName: c.firstName,
  lastName: c.lastName,
  company: c.company,
  phone: c.phones[0]?.value ?? null,
  createdAt: c.createdAt
})
const rows = Array.from({ length: 50 }, (_, i) => ({
  workspace_id: "ws",
  id: `ct_${i}`,
  first_name: "Ada",
  last_name: "Lovelace",
  company: null,
  phones: [{ value: "+14155550100", label: "mobile" }],
  emails: [],
  notes: [],
  properties: { a: "b" },
  tags: ["vip"],
  source: null,
  created_at: new Date(1700000000000 + i),
  updated_at: new Date(1700000000000 + i)
}))
let sink = 0
const N = 4000
const old = () => {
  for (let i = 0; i < N; i++) for (const r of rows) sink += oldToSummary(oldToDetail(oldToContact(r))).id.length
}
const neu = () => {
  for (let i = 0; i < N; i++) for (const r of rows) sink += toSummary(toDetail(contacts.decode(r))).id.length
}
const time = (f: () => void) => {
  const t = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t) / N / rows.length
}
for (let k = 0; k < 3; k++) {
  time(old)
  time(neu)
}
const o: number[] = [], n: number[] = []
for (let k = 0; k < 15; k++) {
  o.push(time(old))
  n.push(time(neu))
}
o.sort((a, b) => a - b)
n.sort((a, b) => a - b)
console.log(
  `contact row mapped, then detail and summary; median of 15 alternating runs of ${N} pages of ${rows.length}:\n  per row: old ${
    o[7]!.toFixed(0)
  } ns, new ${n[7]!.toFixed(0)} ns, new/old ${(n[7]! / o[7]!).toFixed(3)}; per 50-row page: old ${
    (o[7]! * 50 / 1000).toFixed(1)
  } us, new ${(n[7]! * 50 / 1000).toFixed(1)} us`
)
if (sink === 0) throw new Error("nothing mapped")
