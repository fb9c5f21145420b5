/** A small reader of the Prometheus text format, for asserting on `GET /metrics` as a scraper sees it. */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>
  readonly samples: ReadonlyArray<Sample>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy

/** Parses the text; throws on any line that is not a comment, a TYPE/HELP line or a well-formed sample. */
export const parseExposition = (text: string): Exposition => {
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (line.startsWith("# HELP ") || line.startsWith("#")) continue
    const m = SAMPLE.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    if (m[2] !== undefined && m[2] !== "") {
      LABEL.lastIndex = 0
      let consumed = 0
      for (let l = LABEL.exec(m[2]); l !== null; l = LABEL.exec(m[2])) {
        labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c))
        consumed = LABEL.lastIndex
      }
      if (consumed !== m[2].length) throw new Error(`malformed labels: ${line}`)
    }
    const raw = m[3]!
    samples.push({ name: m[1]!, labels, value: raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw) })
  }
  return { types, samples }
}

/** The value of the one sample with this name whose labels include `labels`; undefined if none. */
export const valueOf = (e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined => {
  const found = e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
