/**
 * Bulk seeding of `contacts` for the benchmark: `INSERT ... SELECT ... FROM generate_series` in
 * batches, with deterministic pseudo-random (hashint8extended) picks from realistic name, company,
 * email and phone pools. Names are skewed (common names are picked far more often), some contacts
 * lack a company, email or phone, a few are nameless inbound placeholders.
 *
 * `search_text` / `search_digits` must equal core/contacts/rules.ts `searchText` / `searchDigits`:
 * lower-cased names and emails joined by single spaces with the separators folded into letters, and
 * the digits of each phone joined by spaces. Display strings may hold non-ASCII letters, so their lower-cased forms are computed in JS
 * (`toLowerCase`, as the app does) and passed in; emails are ASCII and already lower case.
 */
import type pg from "pg"
import { SEARCH_SEPARATOR_LETTERS, SEARCH_SEPARATORS } from "../../core/contacts/rules.ts"

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`

const FIRST = [
  "James",
  "Mary",
  "John",
  "Patricia",
  "Robert",
  "Jennifer",
  "Michael",
  "Linda",
  "William",
  "Elizabeth",
  "David",
  "Barbara",
  "Richard",
  "Susan",
  "Joseph",
  "Jessica",
  "Thomas",
  "Sarah",
  "Charles",
  "Karen",
  "Christopher",
  "Lisa",
  "Daniel",
  "Nancy",
  "Matthew",
  "Betty",
  "Anthony",
  "Margaret",
  "Mark",
  "Sandra",
  "Donald",
  "Ashley",
  "Steven",
  "Kimberly",
  "Paul",
  "Emily",
  "Andrew",
  "Donna",
  "Joshua",
  "Michelle",
  "Kenneth",
  "Carol",
  "Kevin",
  "Amanda",
  "Brian",
  "Dorothy",
  "George",
  "Melissa",
  "Timothy",
  "Deborah",
  "Maria",
  "Jose",
  "Luis",
  "Carmen",
  "Juan",
  "Ana",
  "Carlos",
  "Sofia",
  "Miguel",
  "Lucia",
  "Wei",
  "Mei",
  "Hiroshi",
  "Yuki",
  "Priya",
  "Arjun",
  "Aisha",
  "Omar",
  "Fatima",
  "Mohammed",
  "Olga",
  "Ivan",
  "Sven",
  "Ingrid",
  "Lars",
  "Astrid",
  "Pierre",
  "Chloé",
  "François",
  "Zoë",
  "José",
  "Björn",
  "Søren",
  "Renée",
  "Rachel",
  "Nathan",
  "Hannah",
  "Samuel",
  "Grace",
  "Benjamin",
  "Olivia",
  "Ethan",
  "Emma",
  "Noah",
  "Ava",
  "Liam",
  "Isabella",
  "Lucas",
  "Mia",
  "Mateo",
  "Chidi",
  "Ngozi",
  "Kwame",
  "Amara",
  "Dmitri",
  "Anya",
  "Kenji",
  "Sakura",
  "Min-jun",
  "Ji-woo",
  "Rahul",
  "Ananya",
  "Tariq",
  "Leila",
  "Jamal",
  "Keisha",
  "Tyrone",
  "Shanice",
  "Connor",
  "Siobhan"
]

const LAST = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Jones",
  "Garcia",
  "Miller",
  "Davis",
  "Rodriguez",
  "Martinez",
  "Hernandez",
  "Lopez",
  "Gonzalez",
  "Wilson",
  "Anderson",
  "Thomas",
  "Taylor",
  "Moore",
  "Jackson",
  "Martin",
  "Lee",
  "Perez",
  "Thompson",
  "White",
  "Harris",
  "Sanchez",
  "Clark",
  "Ramirez",
  "Lewis",
  "Robinson",
  "Walker",
  "Young",
  "Allen",
  "King",
  "Wright",
  "Scott",
  "Torres",
  "Nguyen",
  "Hill",
  "Flores",
  "Green",
  "Adams",
  "Nelson",
  "Baker",
  "Hall",
  "Rivera",
  "Campbell",
  "Mitchell",
  "Carter",
  "Roberts",
  "Kim",
  "Chen",
  "Wang",
  "Li",
  "Zhang",
  "Patel",
  "Singh",
  "Kumar",
  "Shah",
  "Khan",
  "Ali",
  "Müller",
  "Schmidt",
  "Schneider",
  "Fischer",
  "Weber",
  "Dubois",
  "Lefèvre",
  "Rossi",
  "Russo",
  "Ferrari",
  "Bianchi",
  "Novak",
  "Kowalski",
  "Nowak",
  "Ivanov",
  "Petrov",
  "Andersson",
  "Johansson",
  "Nielsen",
  "Hansen",
  "O'Brien",
  "O'Connor",
  "Murphy",
  "Kelly",
  "Sullivan",
  "McDonald",
  "MacLeod",
  "Tanaka",
  "Suzuki",
  "Watanabe",
  "Yamamoto",
  "Sato",
  "Park",
  "Choi",
  "Okafor",
  "Mensah",
  "Adeyemi",
  "Silva",
  "Santos",
  "Oliveira",
  "Costa",
  "Pereira",
  "Haddad",
  "Cohen",
  "Levi",
  "Friedman",
  "van der Berg",
  "de Jong",
  "Núñez",
  "Peña",
  "Gutierrez",
  "Ortiz",
  "Morales",
  "Reyes",
  "Cruz",
  "Diaz",
  "Vasquez",
  "Castillo",
  "Jimenez"
]

const COMPANY_STEMS = [
  "Acme",
  "Northwind",
  "Blue Harbor",
  "Summit",
  "Pinecrest",
  "Redwood",
  "Silverline",
  "Brightpath",
  "Cedar",
  "Ironclad",
  "Keystone",
  "Lakeside",
  "Maple",
  "Evergreen",
  "Granite",
  "Harbor Point",
  "Horizon",
  "Juniper",
  "Lighthouse",
  "Meridian",
  "Oakridge",
  "Pioneer",
  "Riverbend",
  "Sterling",
  "Sunrise",
  "Trident",
  "Vertex",
  "Westfield",
  "Zenith",
  "Orion",
  "Atlas",
  "Beacon",
  "Copperleaf",
  "Driftwood",
  "Eastgate",
  "Foxglove",
  "Goldcrest",
  "Highland",
  "Ivy Lane",
  "Kestrel",
  "Larkspur",
  "Mosaic",
  "Nimbus",
  "Olympia",
  "Prairie",
  "Quarry",
  "Rosewood",
  "Saffron",
  "Tidewater",
  "Union Square",
  "Bluebird",
  "Crossroads",
  "Fairview",
  "Café Lumière",
  "Müller & Söhne"
]

const COMPANY_SUFFIXES = [
  "Logistics",
  "Dental",
  "Realty",
  "Plumbing",
  "Consulting",
  "Labs",
  "Bakery",
  "Auto Repair",
  "Insurance",
  "Law Group",
  "Health",
  "Fitness",
  "Studio",
  "Roofing",
  "Landscaping",
  "Accounting",
  "Software",
  "Construction",
  "Veterinary Clinic",
  "Coffee Co.",
  "Inc.",
  "LLC",
  "Partners",
  "Capital"
]

const FREE_MAIL = [
  "gmail.com",
  "yahoo.com",
  "outlook.com",
  "hotmail.com",
  "icloud.com",
  "aol.com",
  "proton.me",
  "fastmail.com",
  "gmx.de",
  "mail.com"
]

const US_AREA_CODES = [
  "212",
  "646",
  "718",
  "917",
  "415",
  "628",
  "510",
  "408",
  "650",
  "213",
  "310",
  "323",
  "818",
  "312",
  "773",
  "617",
  "857",
  "202",
  "206",
  "425",
  "503",
  "512",
  "737",
  "214",
  "469",
  "713",
  "832",
  "305",
  "786",
  "404",
  "678",
  "702",
  "602",
  "480",
  "303",
  "720",
  "615",
  "704",
  "919",
  "216",
  "313",
  "612",
  "314",
  "816",
  "412",
  "215",
  "267",
  "801",
  "808",
  "907"
]

/** ASCII letters only, lower case: "O'Brien" -> "obrien", "Chloé" -> "chloe", "Søren" -> "soren". */
const ascii = (s: string) =>
  s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/ø/gi, "o").replace(/ß/g, "ss").toLowerCase().replace(
    /[^a-z0-9]/g,
    ""
  )

const companies = COMPANY_STEMS.flatMap((stem) => COMPANY_SUFFIXES.map((suffix) => ({ stem, suffix })))

export const pools = {
  first: FIRST,
  firstLower: FIRST.map((s) => s.toLowerCase()),
  firstAscii: FIRST.map(ascii),
  last: LAST,
  lastLower: LAST.map((s) => s.toLowerCase()),
  lastAscii: LAST.map(ascii),
  company: companies.map((c) => `${c.stem} ${c.suffix}`),
  companyLower: companies.map((c) => `${c.stem} ${c.suffix}`.toLowerCase()),
  companyDomain: companies.map((c, i) =>
    `${ascii(c.stem)}${ascii(c.suffix)}.${["com", "com", "com", "net", "io", "co"][i % 6]}`
  ),
  freeMail: FREE_MAIL,
  areaCodes: US_AREA_CODES
}

/**
 * The pools as temporary tables (looking up elements of a large text[] parameter is linear in
 * the index, so joining is much cheaper). Free-mail domains and area codes stay small arrays.
 */
const CREATE_POOLS = [
  "CREATE TEMP TABLE bench_first (i int PRIMARY KEY, name text NOT NULL, lower text NOT NULL, ascii text NOT NULL)",
  "CREATE TEMP TABLE bench_last (i int PRIMARY KEY, name text NOT NULL, lower text NOT NULL, ascii text NOT NULL)",
  "CREATE TEMP TABLE bench_company (i int PRIMARY KEY, name text NOT NULL, lower text NOT NULL, domain text NOT NULL)"
]
const FILL_POOL = (table: string) =>
  `INSERT INTO ${table} SELECT o::int, a, b, c FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(a, b, c, o)`

/**
 * One batch: rows i in [from, to]. $1 workspace, $2/$3 range, $4 free-mail domains, $5 area codes,
 * $6/$7/$8 pool sizes (first, last, company). `u1..u3` are deterministic uniforms in [0,1) per row;
 * name picks use u^2 (a skew toward the head of each list, as real name frequencies are).
 */
export const INSERT_BATCH = `
WITH r AS (
  SELECT i,
    1 + floor($6::int * (abs(mod(hashint8extended(i, 1), 1000003))::float8 / 1000003) ^ 2)::int AS fi,
    1 + floor($7::int * (abs(mod(hashint8extended(i, 2), 1000003))::float8 / 1000003) ^ 2)::int AS li,
    1 + floor($8::int * (abs(mod(hashint8extended(i, 3), 1000003))::float8 / 1000003) ^ 1.5)::int AS ci,
    abs(mod(hashint8extended(i, 4), 100)) AS kind,
    abs(mod(hashint8extended(i, 5), 100)) AS has_company,
    abs(mod(hashint8extended(i, 6), 100)) AS email_kind,
    abs(mod(hashint8extended(i, 7), 100)) AS work_mail,
    abs(mod(hashint8extended(i, 8), 100)) AS second_email,
    abs(mod(hashint8extended(i, 9), 100)) AS num,
    abs(mod(hashint8extended(i, 10), 100)) AS phone_kind,
    abs(mod(hashint8extended(i, 11), 100)) AS second_phone,
    abs(mod(hashint8extended(i, 12), 1000000000000)) AS ph1,
    abs(mod(hashint8extended(i, 13), 1000000000000)) AS ph2,
    abs(mod(hashint8extended(i, 14), 1000)) AS misc
  FROM generate_series($2::bigint, $3::bigint) AS g(i)
), v AS (
  SELECT r.i, kind, misc,
    CASE WHEN kind < 2 THEN NULL ELSE f.name END AS first_name,
    CASE WHEN kind < 2 THEN NULL ELSE f.lower END AS first_lower,
    CASE WHEN kind <= 2 THEN NULL ELSE l.name END AS last_name,
    CASE WHEN kind <= 2 THEN NULL ELSE l.lower END AS last_lower,
    CASE WHEN kind < 2 OR has_company >= 65 THEN NULL ELSE c.name END AS company,
    CASE WHEN kind < 2 OR has_company >= 65 THEN NULL ELSE c.lower END AS company_lower,
    CASE
      WHEN kind < 2 OR email_kind < 8 THEN NULL
      ELSE
        CASE mod(email_kind, 5)
          WHEN 0 THEN f.ascii || '.' || l.ascii
          WHEN 1 THEN substr(f.ascii, 1, 1) || l.ascii
          WHEN 2 THEN f.ascii || '_' || l.ascii
          WHEN 3 THEN f.ascii || l.ascii || num
          ELSE f.ascii || '.' || l.ascii || num
        END || '@' ||
        CASE WHEN has_company < 65 AND work_mail < 60 THEN c.domain
             ELSE ($4::text[])[1 + mod(misc, cardinality($4::text[]))] END
    END AS e1,
    CASE
      WHEN kind < 2 OR email_kind < 8 OR second_email >= 12 THEN NULL
      ELSE f.ascii || l.ascii || (100 + misc) || '@' || ($4::text[])[1 + mod(misc / 7, cardinality($4::text[]))]
    END AS e2,
    CASE
      WHEN kind >= 2 AND phone_kind < 4 THEN NULL
      WHEN phone_kind < 12 THEN
        CASE mod(ph1, 3)
          WHEN 0 THEN '+4420' || (7000 + mod(ph1 / 3, 1000)) || lpad(mod(ph1 / 3000, 10000)::text, 4, '0')
          WHEN 1 THEN '+4930' || lpad(mod(ph1 / 3, 100000000)::text, 8, '0')
          ELSE '+331' || lpad(mod(ph1 / 3, 100000000)::text, 8, '0')
        END
      ELSE '+1' || ($5::text[])[1 + mod(ph1, cardinality($5::text[]))] || (200 + mod(ph1 / 100, 800)) || lpad(mod(ph1 / 100000, 10000)::text, 4, '0')
    END AS p1,
    CASE
      WHEN kind < 2 OR phone_kind < 4 OR second_phone >= 15 THEN NULL
      ELSE '+1' || ($5::text[])[1 + mod(ph2, cardinality($5::text[]))] || (200 + mod(ph2 / 100, 800)) || lpad(mod(ph2 / 100000, 10000)::text, 4, '0')
    END AS p2_raw
  FROM r
  JOIN bench_first f ON f.i = r.fi
  JOIN bench_last l ON l.i = r.li
  JOIN bench_company c ON c.i = r.ci
), w AS (
  SELECT v.*, CASE WHEN p2_raw = p1 THEN NULL ELSE p2_raw END AS p2 FROM v
)
INSERT INTO contacts (workspace_id, id, first_name, last_name, company, phones, emails, notes, properties, tags, source,
                      created_at, updated_at, search_text, search_digits)
SELECT $1::uuid, gen_random_uuid(), first_name, last_name, company,
  CASE WHEN p1 IS NULL THEN '[]'::jsonb
       WHEN p2 IS NULL THEN jsonb_build_array(jsonb_build_object('value', p1))
       ELSE jsonb_build_array(jsonb_build_object('value', p1), jsonb_build_object('value', p2)) END,
  CASE WHEN e1 IS NULL THEN '[]'::jsonb
       WHEN e2 IS NULL THEN jsonb_build_array(jsonb_build_object('value', e1))
       ELSE jsonb_build_array(jsonb_build_object('value', e1), jsonb_build_object('value', e2)) END,
  '[]'::jsonb,
  CASE WHEN mod(misc, 10) = 0 THEN '{"plan":"gold"}'::jsonb ELSE '{}'::jsonb END,
  CASE WHEN kind < 2 THEN '[]'::jsonb
       WHEN mod(misc, 13) = 0 THEN '["vip"]'::jsonb
       WHEN mod(misc, 13) IN (1, 2, 3) THEN '["customer"]'::jsonb
       WHEN mod(misc, 13) = 4 THEN '["lead"]'::jsonb
       ELSE '[]'::jsonb END,
  CASE WHEN kind < 2 THEN 'inbound' ELSE 'manual' END,
  ts, ts,
  translate(concat_ws(' ', first_lower, last_lower, company_lower, e1, e2), ${sqlString(SEARCH_SEPARATORS)}, ${
  sqlString(SEARCH_SEPARATOR_LETTERS)
}),
  concat_ws(' ', regexp_replace(p1, '[^0-9]', '', 'g'), regexp_replace(p2, '[^0-9]', '', 'g'))
FROM (
  -- distinct, increasing created_at at millisecond precision (what the API returns)
  SELECT w.*, timestamptz '2021-01-04 09:00:00+00' + i * interval '61 seconds' + mod(misc * 59, 60000) * interval '1 millisecond' AS ts
  FROM w
) AS rows`

export interface SeedOptions {
  readonly workspaceId: string
  readonly count: number
  /** Row number of the first contact (default 1): a later call with the next number adds newer contacts to earlier ones. */
  readonly first?: number
  readonly batchSize: number
  readonly log: (line: string) => void
}

export interface SeedResult {
  readonly seconds: number
  readonly insertSeconds: number
  readonly indexSeconds: number
  readonly analyzeSeconds: number
}

export interface DroppedIndex {
  readonly indexname: string
  readonly indexdef: string
  /** The statistics targets set on its expression columns (migration 0034), which indexdef omits. */
  readonly statistics: ReadonlyArray<{ readonly attnum: number; readonly attstattarget: number }>
}

/**
 * Session settings for a bulk load on `client`, and the GIN indexes of `table` dropped (their exact
 * definitions from pg_indexes kept) so the inserts skip them; `rebuildIndexes` puts them back.
 */
export const beginBulkLoad = async (
  client: pg.Client,
  table: string,
  log: (line: string) => void
): Promise<ReadonlyArray<DroppedIndex>> => {
  await client.query("SET synchronous_commit = off")
  await client.query("SET maintenance_work_mem = '1GB'")
  await client.query("SET jit = off")
  const gin = await client.query<DroppedIndex>(
    `SELECT indexname, indexdef, coalesce((SELECT json_agg(json_build_object('attnum', attnum, 'attstattarget', attstattarget))
       FROM pg_attribute WHERE attrelid = to_regclass(indexname) AND attstattarget > 0), '[]') AS statistics
     FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%USING gin%' ORDER BY indexname`,
    [table]
  )
  for (const { indexname } of gin.rows) await client.query(`DROP INDEX ${indexname}`)
  log(`dropped GIN indexes: ${gin.rows.map((r) => r.indexname).join(", ")}`)
  return gin.rows
}

/** Recreates the indexes `beginBulkLoad` dropped; answers the seconds it took. */
export const rebuildIndexes = async (
  client: pg.Client,
  indexes: ReadonlyArray<DroppedIndex>,
  log: (line: string) => void
): Promise<number> => {
  const start = performance.now()
  for (const { indexdef, indexname, statistics } of indexes) {
    const t = performance.now()
    await client.query(indexdef)
    for (const { attnum, attstattarget } of statistics) {
      await client.query(`ALTER INDEX ${indexname} ALTER COLUMN ${attnum} SET STATISTICS ${attstattarget}`)
    }
    log(`recreated ${indexname} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  return (performance.now() - start) / 1000
}

/**
 * Drops the GIN indexes of `contacts` (keeping their exact definitions from pg_indexes), inserts in
 * batches, recreates them, then VACUUM ANALYZE. Runs on one dedicated client.
 */
export const seedContacts = async (client: pg.Client, options: SeedOptions): Promise<SeedResult> => {
  const { workspaceId, count, batchSize, log } = options
  const first = options.first ?? 1
  const last = first + count - 1
  const start = performance.now()
  const gin = await beginBulkLoad(client, "contacts", log)

  const p = pools
  for (const statement of CREATE_POOLS) await client.query(statement)
  await client.query(FILL_POOL("bench_first"), [p.first, p.firstLower, p.firstAscii])
  await client.query(FILL_POOL("bench_last"), [p.last, p.lastLower, p.lastAscii])
  await client.query(FILL_POOL("bench_company"), [p.company, p.companyLower, p.companyDomain])
  await client.query("ANALYZE bench_first, bench_last, bench_company")
  const poolParams = [p.freeMail, p.areaCodes, p.first.length, p.last.length, p.company.length]
  const insertStart = performance.now()
  for (let from = first; from <= last; from += batchSize) {
    const to = Math.min(last, from + batchSize - 1)
    const t = performance.now()
    await client.query(INSERT_BATCH, [workspaceId, from, to, ...poolParams])
    const secs = (performance.now() - t) / 1000
    log(
      `inserted ${to.toLocaleString("en-US")} / ${last.toLocaleString("en-US")} (${
        Math.round((to - from + 1) / secs).toLocaleString("en-US")
      } rows/s)`
    )
  }
  const insertSeconds = (performance.now() - insertStart) / 1000

  const indexSeconds = await rebuildIndexes(client, gin, log)
  await client.query("DROP TABLE bench_first, bench_last, bench_company")

  const analyzeStart = performance.now()
  await client.query("VACUUM (ANALYZE) contacts")
  const analyzeSeconds = (performance.now() - analyzeStart) / 1000
  log(`VACUUM (ANALYZE) contacts in ${analyzeSeconds.toFixed(1)} s`)
  return { seconds: (performance.now() - start) / 1000, insertSeconds, indexSeconds, analyzeSeconds }
}
