/**
 * Caller text as it may appear in an error message or a log line. Messages echo what a caller sent
 * (a URL that cannot be fetched, an unknown event type, a field name), and log lines are read by
 * people and parsed line by line: a raw newline there writes a fake log line, a bidi override
 * reorders what the reader sees, and a URL's `user:pass@` puts a credential into every log copy.
 */

/** Control, format (bidi, zero-width), private-use, unassigned and lone-surrogate characters, and every space but " ". */
const UNPRINTABLE = /^(?! )[\p{C}\p{Z}]$/u

const escaped = (ch: string): string => {
  const code = ch.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/**
 * `text` with every non-printable character written as `\u000a` (`\u{e0001}` beyond the BMP), cut
 * to at most `max` characters (plus `…`) without splitting an escape or a surrogate pair. Reads no
 * more of `text` than it shows, so a 1 MiB field costs what a short one does.
 */
export const displayText = (text: string, max = 200): string => {
  let out = ""
  for (const ch of text) {
    const piece = UNPRINTABLE.test(ch) ? escaped(ch) : ch
    if (out.length + piece.length > max) return `${out}…`
    out += piece
  }
  return out
}

/**
 * The URL's userinfo, as the WHATWG URL parser reads it: after `scheme:` and any slashes, everything
 * up to the last `@` before the host ends (`/`, `\`, `?` or `#`). The parser drops leading controls
 * and spaces, and tabs and newlines anywhere, so they may sit inside the scheme and slashes too.
 * Matched on the raw text, so a URL that does not parse loses its credentials as well.
 */
const USERINFO = /^([\0-\x20]*[A-Za-z][A-Za-z0-9+.\t\n\r-]*:[\\/\t\n\r]*)[^/\\?#]*@/

/** A caller-supplied URL for messages and logs: without `user:pass@`, escaped and capped like displayText. */
export const displayUrl = (url: string, max = 200): string => displayText(url.replace(USERINFO, "$1"), max)
