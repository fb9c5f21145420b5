/**
 * The texts readers see in the JSON Schemas we publish: the OpenAPI document (adapters/http/openapi.ts)
 * and the MCP tools' input and output schemas (adapters/mcp/tools.ts). Effect writes a title and a
 * description for each refinement without an annotation of its own (title "maxLength(32)",
 * "a string at most 32 character(s) long"); they repeat the keyword beside them (`maxLength`,
 * `minimum`, `pattern`, `format`), so they are removed rather than shown to readers, client
 * generators and models. Fields every resource shares are described by name.
 */

/** Effect's title for a refinement, e.g. "maxLength(32)", "between(1, 200)", "int". */
export const automaticTitle =
  /^(minLength|maxLength|length|minItems|maxItems|itemsCount|between|int|greaterThan|greaterThanOrEqualTo|lessThan|lessThanOrEqualTo|nonNegative|nonPositive|positive|negative|finite|multipleOf|pattern|startsWith|endsWith|includes|trimmed|lowercased|uppercased|nonEmptyString|UUID|ULID|unknown)(\(.*\))?$/s

const automaticDescription = new RegExp(
  "^(" +
    [
      "an? (string|array) (of )?(at most|at least|with a length of|of exactly) \\d+ (character|item)\\(s\\)( long)?",
      "a string matching the pattern .*",
      "a (number|bigint) (between|greater than|less than) .*",
      "an integer",
      "a (positive|negative|non-negative|non-positive|finite) number",
      "a string to be decoded into .*",
      "an object to be decoded into .*",
      "a Universally Unique Identifier",
      "a Universally Unique Lexicographically Sortable Identifier",
      "a non empty string",
      "a string with no leading or trailing whitespace"
    ].join("|") +
    ")$",
  "s"
)

/**
 * Descriptions for the fields every resource shares, by name, where the schema gives none: ids,
 * references, phone numbers, timestamps and the pagination cursor mean the same thing throughout the API.
 */
export const fieldDescription = (name: string): string | undefined => {
  if (name === "id") return "The resource's unique id"
  if (name === "cursor") {
    return "The `nextCursor` of the previous page, to read the next one; omit for the first page. Bound to the same filters"
  }
  if (name === "limit") return "Items per page"
  if (name === "nextCursor") return "Pass as `cursor` to read the next page; `null` on the last page"
  if (/^[a-z][A-Za-z]*Id$/.test(name)) {
    return `The id of the ${name.slice(0, -2).replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`
  }
  if (/^(phone|to|from|e164|numberE164|forwardTo|phoneNumber|mobilePhone|phone_number)$/.test(name)) {
    return "A phone number; every answer gives it in E.164 form (e.g. `+14155550100`)"
  }
  if (/^[a-z][A-Za-z]*At$/.test(name)) return "A time in ISO 8601 form, UTC (e.g. `2026-08-17T09:30:00.000Z`)"
  return undefined
}

/** A field's name as a label: `firstName` -> "First name", `acknowledge_trial_end` -> "Acknowledge trial end". */
export const nameTitle = (name: string): string => {
  const words = name.replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(" ")
    .map((word) => acronyms[word] ?? word).join(" ")
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const acronyms: Record<string, string> = { api: "API", id: "ID", pin: "PIN", url: "URL", urls: "URLs" }

/**
 * Removes Effect's automatic texts and describes the shared fields, through every schema (and,
 * in a document, every parameter) under `node`. Changes `node` in place.
 */
export const describeFields = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(describeFields)
  if (node === null || typeof node !== "object") return
  const o = node as Record<string, any>
  if (typeof o.title === "string" && automaticTitle.test(o.title)) delete o.title
  if (typeof o.description === "string" && automaticDescription.test(o.description)) delete o.description
  // Children first: a field's automatic description is gone before its shared one is considered.
  for (const value of Object.values(o)) describeFields(value)
  // An object schema, not an example value that happens to have a `properties` key.
  if (o.type === "object" && o.properties !== null && typeof o.properties === "object") {
    for (const [name, property] of Object.entries<Record<string, any>>(o.properties)) {
      const text = fieldDescription(name)
      if (
        text !== undefined && property !== null && typeof property === "object" && property.description === undefined
      ) property.description = text
    }
  }
  // A parameter: its schema's description (HttpApi copies it), else the shared one for its name.
  if (typeof o.name === "string" && typeof o.in === "string" && o.schema !== undefined) {
    const text = o.description ?? o.schema.description ?? fieldDescription(o.name)
    if (text !== undefined) o.description = text
  }
}
