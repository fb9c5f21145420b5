/**
 * Message search newest window first (migration 0034). A search answers one page, newest first;
 * over millions of texts, fetching every match of a common pair of words and sorting them costs
 * more than the page is worth. So the store asks the search index for the rows of the newest
 * 30-day buckets first (each text's bucket is a key of `search_document`, beside its words), then
 * for everything older, in one statement whose branches run in order until the page is full.
 */
import type { SearchQuery } from "../../core/conversations/model.ts"

/** The span of a bucket: `search_document`'s `#<n>` key (migration 0034). */
const BUCKET_MS = 30 * 86_400_000

/** The bucket of a time, as `search_document` computes it (by epoch, in any time zone). */
const bucketOf = (at: Date | string): number => Math.floor(new Date(at).getTime() / BUCKET_MS)

/** The buckets searched before the rest, newest first, and where the rest begins. */
export interface Windows {
  readonly windows: ReadonlyArray<ReadonlyArray<number>>
  /** The rest: the rows created before this. */
  readonly olderThan: Date
}

/** Windows of `widths` buckets each, newest first, the first ending with the bucket holding `newest`. */
export const windowsFrom = (newest: Date | string, widths: ReadonlyArray<number>): Windows => {
  let next = bucketOf(newest)
  const windows = widths.map((width) => {
    const buckets = Array.from({ length: width }, (_, i) => next - i)
    next -= width
    return buckets
  })
  return { windows, olderThan: new Date((next + 1) * BUCKET_MS) }
}

/**
 * The index's own prefixes (migration 0034's `search_document`): a word of more than k letters also
 * carries its first k, marked `~` (`invo~`), for k from 2 to 4. A word a person is still typing is
 * then one or two exact keys, which the index skips through beside the other words, where a prefix
 * match (`invoice:*`) first gathers every row of every word it begins.
 */
const PREFIX_MIN = 2
const PREFIX_MAX = 4

/** A bucket's key in `search_document`. */
export const bucketLexeme = (bucket: number) => `'#${bucket}'`

/**
 * The index's query for a message search, without its buckets: every word, and the last as the
 * prefix keys above. A last word shorter than the shortest prefix is left to the row's own check
 * (the caller's exact query), which every row the index yields must pass anyway.
 */
export const indexQuery = (query: SearchQuery): string => {
  const last = query.words.length - 1
  return query.words.flatMap((word, i) => {
    if (i !== last || !query.prefix) return [`'${word}'`]
    const letters = [...word]
    if (letters.length < PREFIX_MIN) return []
    if (letters.length > PREFIX_MAX) return [`'${letters.slice(0, PREFIX_MAX).join("")}~'`]
    return [`('${word}' | '${word}~')`]
  }).join(" & ")
}
