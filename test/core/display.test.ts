/** Issue 15 defect 11: caller text in messages and logs, without credentials or raw control characters. */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { displayText, displayUrl } from "../../core/kernel/display.ts"

/** What may never reach a message or a log line raw. */
const UNPRINTABLE = /(?! )[\p{C}\p{Z}]/u

describe("displayText", () => {
  it("escapes control, format, separator and lone-surrogate characters as \\u escapes", () => {
    assert.strictEqual(displayText("a\nb\r\tc\u0000d\u007f"), "a\\u000ab\\u000d\\u0009c\\u0000d\\u007f")
    assert.strictEqual(displayText("x\u2028y\u2029z\u0085"), "x\\u2028y\\u2029z\\u0085")
    assert.strictEqual(displayText("\u202eevil\u200b\ufeff"), "\\u202eevil\\u200b\\ufeff")
    assert.strictEqual(displayText("nb\u00a0sp"), "nb\\u00a0sp")
    assert.strictEqual(displayText("lone \ud800 high"), "lone \\ud800 high")
    assert.strictEqual(displayText("tag \u{e0041}"), "tag \\u{e0041}")
  })

  it("keeps printable text, spaces and any script as it is", () => {
    for (
      const s of ["plain text", "Grüße, 東京 👋🏽", "quotes \" and \\ backslash", "https://hooks.example.com/a?b=c#d"]
    ) {
      assert.strictEqual(displayText(s), s)
    }
  })

  it("caps the length without splitting an escape or a surrogate pair, reading no more than it shows", () => {
    assert.strictEqual(displayText("abcdef", 4), "abcd…")
    assert.strictEqual(displayText("ab\ncd", 4), "ab…")
    assert.strictEqual(displayText("a👋b", 2), "a…")
    assert.strictEqual(displayText("abc", 3), "abc")
    const huge = "x".repeat(4 * 1024 * 1024)
    const started = performance.now()
    for (let i = 0; i < 1000; i++) displayText(huge, 200)
    assert.isBelow(performance.now() - started, 1000)
  })

  it("never shows an unprinted character, and stays within max + 1", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.integer({ min: 1, max: 250 }), (s, max) => {
        const shown = displayText(s, max)
        assert.notMatch(shown, UNPRINTABLE)
        assert.isAtMost(shown.length, max + 1)
      })
    )
  })
})

describe("displayUrl", () => {
  it("drops userinfo, however the URL spells it", () => {
    const cases: Array<[string, string]> = [
      ["https://user:pw@hooks.example.com/x", "https://hooks.example.com/x"],
      ["https://user@hooks.example.com/x", "https://hooks.example.com/x"],
      ["https://a:b@c@hooks.example.com/x?y=1@2", "https://hooks.example.com/x?y=1@2"],
      ["https:user:pw@hooks.example.com/x", "https:hooks.example.com/x"],
      ["https:\\\\user:pw@hooks.example.com\\x", "https:\\\\hooks.example.com\\x"],
      ["  https://user:pw@hooks.example.com/x", "  https://hooks.example.com/x"],
      ["ht\ntps://us\ner:p\tw@hooks.example.com/x", "ht\\u000atps://hooks.example.com/x"],
      ["https://user:pw@hooks.example.com:8443", "https://hooks.example.com:8443"],
      ["HTTP://u:p@[::1]/", "HTTP://[::1]/"]
    ]
    for (const [raw, shown] of cases) assert.strictEqual(displayUrl(raw), shown, JSON.stringify(raw))
  })

  it("leaves an @ in the path, query or fragment alone", () => {
    for (
      const url of [
        "https://hooks.example.com/a@b",
        "https://hooks.example.com?to=a@b",
        "https://hooks.example.com#a@b"
      ]
    ) {
      assert.strictEqual(displayUrl(url), url)
    }
  })

  it("escapes a newline that would forge a log line, and caps a long URL", () => {
    const forged = "https://media.example.com/a.png\ntimestamp=2026-01-01T00:00:00Z level=ERROR message=\"forged\""
    assert.notInclude(displayUrl(forged), "\n")
    assert.include(displayUrl(forged), "a.png\\u000atimestamp")
    assert.strictEqual(displayUrl(`https://example.com/${"q".repeat(5000)}`).length, 201)
  })

  it("never shows the password of a URL the WHATWG parser reads as having one", () => {
    const part = fc.string({ unit: fc.constantFrom(..."ab:@/\\?#.\t\n %"), maxLength: 12 })
    fc.assert(
      fc.property(
        fc.constantFrom("https://", "https:", "http:\\\\", " https://", "wss://"),
        part,
        part,
        (scheme, user, rest) => {
          const raw = `${scheme}${user}:s3cr3t@${rest}`
          let url: URL
          try {
            url = new URL(raw)
          } catch {
            return
          }
          if (url.password.includes("s3cr3t")) assert.notInclude(displayUrl(raw), "s3cr3t", JSON.stringify(raw))
        }
      )
    )
  })
})
