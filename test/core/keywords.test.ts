/**
 * CONTRACT "Opt-outs and keywords": a text is a keyword when its whole body, trimmed,
 * case-insensitive and without trailing punctuation, is one of the words; the service's replies
 * in CONTRACT's wording. Runs of inner whitespace count as one space (`OPT  OUT`): the recipient
 * typed the phrase, and a revocation is honoured when it is reasonably clear.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { type KeywordKind, keywordOf, KEYWORDS, replyTo } from "../../core/optouts/keywords.ts"

const table: ReadonlyArray<readonly [string, KeywordKind]> = [
  ["STOP", "stop"],
  ["STOPALL", "stop"],
  ["STOP ALL", "stop"],
  ["UNSUBSCRIBE", "stop"],
  ["CANCEL", "stop"],
  ["END", "stop"],
  ["QUIT", "stop"],
  ["REVOKE", "stop"],
  ["OPTOUT", "stop"],
  ["OPT OUT", "stop"],
  ["OPT-OUT", "stop"],
  ["START", "start"],
  ["UNSTOP", "start"],
  ["YES", "start"],
  ["SUBSCRIBE", "start"],
  ["HELP", "help"],
  ["INFO", "help"]
]

/** `opt out` -> `Opt Out`. */
const mixed = (w: string) => w.toLowerCase().replace(/(^|[ -])(\p{L})/gu, (_, sep, c: string) => sep + c.toUpperCase())
/** `stop` -> `sToP`. */
const alternating = (w: string) => [...w].map((c, i) => (i % 2 === 0 ? c.toLowerCase() : c.toUpperCase())).join("")

const dressings: ReadonlyArray<readonly [string, (w: string) => string]> = [
  ["as is", (w) => w],
  ["lower case", (w) => w.toLowerCase()],
  ["capitalised", mixed],
  ["alternating case", alternating],
  ["surrounding spaces", (w) => `   ${w}  `],
  ["tabs and a newline", (w) => `\t${w}\n`],
  ["!", (w) => `${w.toLowerCase()}!`],
  [" Word. ", (w) => ` ${mixed(w)}. `],
  ["!!!", (w) => `${w}!!!`],
  ["?", (w) => `${w.toLowerCase()}?`],
  ["...", (w) => `${w}...`],
  ["…", (w) => `${w}…`],
  ["space then punctuation", (w) => `${w} !`],
  ["punctuation, then spaces", (w) => `${w}.  `]
]

describe("keywordOf: every keyword of CONTRACT", () => {
  it("the list is CONTRACT's, no more and no fewer", () => {
    assert.deepStrictEqual([...KEYWORDS].sort(), table.map(([w]) => w).sort())
  })

  for (const [word, kind] of table) {
    it(`${word} is ${kind}, however it is typed`, () => {
      for (const [how, dress] of dressings) {
        const body = dress(word)
        assert.deepStrictEqual(keywordOf(body), { kind, word }, `${how}: ${JSON.stringify(body)}`)
      }
    })
  }

  it("inner whitespace of a two-word keyword counts as one space; the word is reported with one", () => {
    for (const body of ["OPT  OUT", "opt\tout", "Stop   All", " opt \n out! "]) {
      const found = keywordOf(body)
      assert.isNotNull(found, JSON.stringify(body))
      assert.include(["OPT OUT", "STOP ALL"], found!.word)
    }
  })
})

describe("keywordOf: near misses are ordinary texts", () => {
  const misses: ReadonlyArray<string | null> = [
    null,
    "",
    "   ",
    "!!!",
    "stop please",
    "please stop",
    "Stop texting me",
    "stopp",
    "sstop",
    "s t o p",
    "S.T.O.P",
    "STOP STOP",
    "stop stop!",
    "STOP-ALL",
    "OPT_OUT",
    "OPTOUTS",
    "optout now",
    "un subscribe",
    "yes please",
    "yess",
    "help me",
    "HELPP",
    "information",
    "ending",
    "The End",
    "¿stop?",
    "stop 🛑",
    "0STOP",
    "STOP1"
  ]
  for (const body of misses) {
    it(`${JSON.stringify(body)} is not a keyword`, () => {
      assert.isNull(keywordOf(body))
    })
  }

  it("a keyword with anything but whitespace and punctuation after it is not one", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...table.map(([w]) => w)),
        fc.stringMatching(/^[ ]?[A-Za-z0-9]{1,6}$/),
        (word, tail) => {
          const body = word + tail
          // Unless the tail completes another keyword (STOP + ALL).
          const other = table.find(([w]) => w === body.toUpperCase() || w === body.toUpperCase().replace(/ +/g, " "))
          assert.deepStrictEqual(keywordOf(body), other === undefined ? null : { kind: other[1], word: other[0] })
        }
      )
    )
  })
})

describe("replyTo: CONTRACT's wording", () => {
  const acme = { brand: "Acme Plumbing", helpMessage: null, contact: "+12175550142" }

  it("STOP and START name the brand", () => {
    assert.strictEqual(
      replyTo("stop", acme),
      "Acme Plumbing: You are unsubscribed and will receive no more messages. Reply START to resubscribe."
    )
    assert.strictEqual(
      replyTo("start", acme),
      "Acme Plumbing: You are resubscribed. Reply STOP to unsubscribe, HELP for help."
    )
  })

  it("HELP: the registration's helpMessage when there is one, whatever the contact", () => {
    assert.strictEqual(replyTo("help", { ...acme, helpMessage: "Acme: call us." }), "Acme: call us.")
    assert.strictEqual(
      replyTo("help", { brand: "Acme", helpMessage: "Acme: call us.", contact: null }),
      "Acme: call us."
    )
  })

  it("HELP without a helpMessage: the default with the business contact, or without a Help: part when there is none", () => {
    assert.strictEqual(
      replyTo("help", acme),
      "Acme Plumbing: Reply STOP to unsubscribe. Msg & data rates may apply. Help: +12175550142."
    )
    assert.strictEqual(
      replyTo("help", { ...acme, contact: "office@acme.example" }),
      "Acme Plumbing: Reply STOP to unsubscribe. Msg & data rates may apply. Help: office@acme.example."
    )
    assert.strictEqual(
      replyTo("help", { ...acme, contact: null }),
      "Acme Plumbing: Reply STOP to unsubscribe. Msg & data rates may apply."
    )
  })
})
