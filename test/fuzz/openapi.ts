/** The operations of the served OpenAPI document, as the fuzz suite needs them: nothing is listed by hand. */

export type JsonSchema = Readonly<Record<string, any>>

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface Operation {
  /** `METHOD /path/{param}`, as in the document. */
  readonly id: string
  readonly method: string
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The JSON request body's schema, if the operation takes one. */
  readonly body: JsonSchema | undefined
  /** Every status the document lists for the operation. */
  readonly statuses: ReadonlySet<number>
  /** The schema of each status's JSON answer. */
  readonly answers: ReadonlyMap<number, JsonSchema>
  /** The statuses it documents as a page or a redirect rather than JSON (the sign-in link's 303 and 400). */
  readonly pages: ReadonlySet<number>
  /** The names of the security schemes it accepts; empty when it needs none. */
  readonly security: ReadonlyArray<string>
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

export interface Document {
  readonly operations: ReadonlyArray<Operation>
  /** Follows `$ref`s (local ones only, which is all the document has). */
  readonly resolve: (schema: JsonSchema) => JsonSchema
}

export const readDocument = (doc: any): Document => {
  const resolve = (schema: JsonSchema): JsonSchema => {
    let s = schema
    for (let hops = 0; typeof s?.["$ref"] === "string"; hops++) {
      if (hops > 50) throw new Error(`$ref cycle at ${schema["$ref"]}`)
      const ref: string = s["$ref"]
      if (!ref.startsWith("#/")) throw new Error(`unsupported $ref ${ref}`)
      s = ref.slice(2).split("/").reduce((node: any, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc)
      if (s === undefined) throw new Error(`unresolved $ref ${ref}`)
    }
    return s
  }
  const operations: Array<Operation> = []
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!METHODS.includes(method)) continue
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map((p: any) => resolve(p))
        .filter((p: any) => p.in === "path" || p.in === "query" || p.in === "header")
        .map((p: any): Parameter => ({
          name: p.name,
          in: p.in,
          required: p.required === true || p.in === "path",
          schema: p.schema ?? {}
        }))
      const jsonSchema = (content: Record<string, any> | undefined) =>
        Object.entries<any>(content ?? {}).find(([type]) => /json/i.test(type))?.[1].schema
      const answers = new Map<number, JsonSchema>()
      const pages = new Set<number>()
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        const content = resolve(response).content
        const schema = jsonSchema(content)
        if (schema !== undefined) answers.set(Number(status), schema)
        const html = Object.keys(content ?? {}).some((type) => /html/i.test(type))
        if (html || /^3\d\d$/.test(status)) pages.add(Number(status))
      }
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        body: jsonSchema(resolve(op.requestBody ?? {}).content),
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number).filter(Number.isInteger)),
        answers,
        pages,
        security: (op.security ?? doc.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s))
      })
    }
  }
  return { operations, resolve }
}
