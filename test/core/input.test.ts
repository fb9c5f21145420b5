/** core/kernel/input.ts: the bounds every caller input meets before a Schema, checked on the JSON text. */
import { describe, expect, it } from "vitest"
import { InputBounds, jsonProblem, jsonTextProblem, textProblem } from "../../core/kernel/input.ts"

const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`

describe("jsonTextProblem", () => {
  it("passes JSON within every bound, whatever its shape", () => {
    const samples = [
      "",
      "null",
      "\"plain\"",
      "{\"firstName\":\"Ada\",\"tags\":[\"a\",\"b\"],\"properties\":{\"k\":\"v\"},\"n\":-1.5e3,\"ok\":true,\"none\":null}",
      JSON.stringify({ emoji: "🚀 é 中", escaped: "\"quoted\" \\ back\nslash", pair: "\ud83d\ude80" }),
      JSON.stringify({ items: Array.from({ length: InputBounds.arrayItems }, (_, i) => i) }),
      JSON.stringify(Object.fromEntries(Array.from({ length: InputBounds.objectKeys }, (_, i) => [`k${i}`, i]))),
      nested(InputBounds.depth),
      JSON.stringify({ a: "x".repeat(InputBounds.stringLength) }),
      JSON.stringify(Array.from({ length: 15 }, () => "x".repeat(InputBounds.stringLength)))
    ]
    for (const text of samples) expect(jsonTextProblem(text), text.slice(0, 80)).toBeUndefined()
  })

  it("names where a bound is passed", () => {
    expect(jsonTextProblem(JSON.stringify({ tags: Array.from({ length: InputBounds.arrayItems + 1 }, () => "a") })))
      .toBe(
        `tags: more than ${InputBounds.arrayItems} items`
      )
    expect(
      jsonTextProblem(
        JSON.stringify({
          p: Object.fromEntries(Array.from({ length: InputBounds.objectKeys + 1 }, (_, i) => [`k${i}`, 1]))
        })
      )
    ).toBe(
      `p: more than ${InputBounds.objectKeys} keys`
    )
    expect(jsonTextProblem(nested(InputBounds.depth + 1))).toBe(
      `${
        Array.from({ length: InputBounds.depth }, () => "0").join(".")
      }: nested deeper than ${InputBounds.depth} levels`
    )
    expect(jsonTextProblem(nested(3_000))).toMatch(/nested deeper than/)
    const many = JSON.stringify(Array.from({ length: 30 }, () => Array.from({ length: 900 }, () => 0)))
    expect(jsonTextProblem(many)).toBe(`body: more than ${InputBounds.values} values in all`)
    expect(jsonTextProblem(JSON.stringify({ a: [{ b: ["x", { c: "\u0000" }] }] }))).toBe(
      "a.0.b.1.c: must not contain NUL characters"
    )
    expect(jsonTextProblem(JSON.stringify({ note: "x".repeat(InputBounds.stringLength + 1) }))).toBe(
      `note: longer than ${InputBounds.stringLength} characters`
    )
    expect(jsonTextProblem(JSON.stringify({ ["k".repeat(InputBounds.stringLength + 1)]: 1 }))).toBe(
      `body: a key longer than ${InputBounds.stringLength} characters`
    )
  })

  it("refuses NUL and lone surrogates in escapes or raw, in values and keys, and passes pairs", () => {
    for (
      const text of [
        "\"\\u0000\"",
        "\"a\u0000\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\ud800\"",
        "\"x\udfffy\"",
        "\"\\uD83D\""
      ]
    ) {
      expect(jsonTextProblem(text), text).toMatch(/^body: (must not contain NUL|must be well-formed)/)
    }
    expect(jsonTextProblem("{\"k\\u0000\":1}")).toBe("body: a key must not contain NUL characters")
    expect(jsonTextProblem("[\"\\ud83d\\ude80\", \"\\uD83D\\uDE80\", \"\ud83d\ude80\"]")).toBeUndefined()
  })

  it("does not count keys as values, and keeps counting across malformed text without failing", () => {
    const keys = JSON.stringify(
      Object.fromEntries(Array.from({ length: InputBounds.objectKeys }, (_, i) => [`k${i}`, 0]))
    )
    expect(jsonTextProblem(`[${Array.from({ length: 4 }, () => keys).join(",")}]`)).toBeUndefined()
    for (const junk of ["{", "[[[", "\"unterminated", "}}]]", "{:,:}", "tru", "\\", "{\"a\":\"\\u12\"}"]) {
      expect(() => jsonTextProblem(junk)).not.toThrow()
    }
  })
})

describe("jsonProblem and textProblem", () => {
  it("bound an in-process value through its JSON text", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(jsonProblem({ x: deep })).toMatch(/^x\.0\.0.*nested deeper than/)
    expect(jsonProblem({ s: "\ud800" })).toBe("s: must be well-formed Unicode (a lone surrogate)")
    const cycle: Record<string, unknown> = {}
    cycle["self"] = cycle
    expect(jsonProblem(cycle)).toMatch(/not JSON/)
    expect(jsonProblem(undefined)).toBeUndefined()
  })

  it("textProblem refuses NUL and lone surrogates only", () => {
    expect(textProblem("a\u0000")).toMatch(/NUL/)
    expect(textProblem("\udc00")).toMatch(/lone surrogate/)
    expect(textProblem("🚀 ok")).toBeUndefined()
  })
})
