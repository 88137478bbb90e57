/**
 * BM25 in JavaScript for the words path's candidates, and the postings arithmetic that picks them: pure functions
 * over folded text and rowid lists.
 */
import { roughStem } from './query.js'
import { isAscii } from './fold.js'

/** BM25's constants (Robertson et al.), as FTS5's bm25() uses them */
export const K1 = 1.2
export const B = 0.75
/** a word as the word index's tokenizer sees one */
export const WORD_TOKEN = /[\p{L}\p{N}\p{Co}]+/gu
const WORD_CHAR = /[\p{L}\p{N}\p{Co}]/u
const SPAN_TOKEN = new RegExp(WORD_TOKEN.source, 'gu')

/**
 * BM25's IDF of a term held by `df` of `n` passages. `lucene`: ln(1 + (n − df + 0.5) / (df + 0.5)), always positive,
 * so a word in half the passages or more still tells a passage holding it from one that does not (Lucene's BM25, and
 * bench/bm25.ts). `robertson`: ln((n − df + 0.5) / (df + 0.5)), the Robertson–Spärck Jones weight, floored at 1e-6:
 * about 0 for such a word, which then cannot order anything.
 */
export function inverseFrequency(kind: 'lucene' | 'robertson', n: number, df: number): number {
  const odds = (n - df + 0.5) / (df + 0.5)
  return kind === 'lucene' ? Math.log(1 + odds) : Math.max(1e-6, Math.log(odds))
}

/**
 * How often a term (its words lightly stemmed) occurs in a folded text: each place the first stem starts a
 * word whose stem it is, followed by the term's other words. Cheaper than stemming every word of the text.
 */
export function termFrequency(text: string, stem: string[]): number {
  let n = 0
  for (let at = text.indexOf(stem[0]); at >= 0; at = text.indexOf(stem[0], at + 1)) {
    if (at > 0 && WORD_CHAR.test(text[at - 1])) continue
    WORD_TOKEN.lastIndex = at
    let ok = true
    for (const s of stem) {
      const m = WORD_TOKEN.exec(text)
      if (!m || roughStem(m[0]) !== s || (s === stem[0] && m.index !== at)) { ok = false; break }
    }
    if (ok) n++
  }
  return n
}

/**
 * the score of the n-th best entry (0 when there are fewer): the n best kept in a min-heap, most entries compared
 * with its top only (cheaper than a map counting the distinct scores of tens of thousands of candidates)
 */
export function cutLevel(scores: number[], n: number): number {
  if (n <= 0) return Infinity
  if (scores.length < n) return 0
  const heap = new Float64Array(n)
  for (let i = 0; i < n; i++) heap[i] = scores[i]
  const down = (from: number) => {
    const v = heap[from]
    let i = from
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const c = l + 1 < n && heap[l + 1] < heap[l] ? l + 1 : l
      if (heap[c] >= v) break
      heap[i] = heap[c]
      i = c
    }
    heap[i] = v
  }
  for (let i = (n >> 1) - 1; i >= 0; i--) down(i)
  for (let i = n; i < scores.length; i++) {
    if (scores[i] > heap[0]) { heap[0] = scores[i]; down(0) }
  }
  return heap[0]
}

/**
 * Where the n entries of highest score are (indices), ties to the higher rowid (newer): the same as sorting
 * every entry, without the sort. A score is a sum of a few terms' weights, so there are few distinct scores:
 * only the entries at or above the n-th best score are sorted.
 */
export function topEntries(rowids: number[], scores: number[], n: number): number[] {
  const order = (a: number, b: number) => scores[b] - scores[a] || rowids[b] - rowids[a]
  const cut = cutLevel(scores, n)
  const above: number[] = []
  const at: number[] = []
  let newestFirst = true
  scores.forEach((score, k) => {
    if (score > cut) above.push(k)
    else if (score === cut) {
      if (at.length > 0 && rowids[k] > rowids[at[at.length - 1]]) newestFirst = false
      at.push(k)
    }
  })
  // the entries at the cut tie: the newest go first (merged postings already come newest first)
  if (!newestFirst) at.sort(order)
  return above.sort(order).concat(at.slice(0, Math.max(0, n - above.length)))
}

/**
 * Postings lists (rowids, each newest first) merged into one, newest first: each rowid once, with the sum of
 * the weights and the bits of the lists holding it. A walk over the heads, no map.
 */
export function mergePostings(lists: number[][], weights: number[], bits: number[]) {
  const rowids: number[] = []
  const weight: number[] = []
  const held: number[] = []
  const heads = lists.map(() => 0)
  for (;;) {
    let top = -Infinity
    for (let j = 0; j < lists.length; j++) {
      if (heads[j] < lists[j].length && lists[j][heads[j]] > top) top = lists[j][heads[j]]
    }
    if (top === -Infinity) break
    let w = 0
    let m = 0
    for (let j = 0; j < lists.length; j++) {
      if (heads[j] < lists[j].length && lists[j][heads[j]] === top) { w += weights[j]; m |= bits[j]; heads[j]++ }
    }
    rowids.push(top); weight.push(w); held.push(m)
  }
  return { rowids, weight, held }
}

/** how many words a folded text holds, as WORD_TOKEN splits it, without making the words */
export function wordCount(text: string): number {
  if (!isAscii(text)) return text.match(WORD_TOKEN)?.length ?? 0
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const w = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90)
    if (w && !inWord) n++
    inWord = w
  }
  return n
}

/** whether some rowid is in every list (each newest first) */
export function intersects(lists: number[][]): boolean {
  const [first, ...rest] = [...lists].sort((a, b) => a.length - b.length)
  let common = first
  for (const list of rest) {
    const held = new Set(common)
    common = list.filter((r) => held.has(r))
    if (common.length === 0) return false
  }
  return common.length > 0
}

/**
 * How much a query term found in a passage's other fields counts beside one found in its text (BM25F-like: each
 * field's term frequency times its weight, added to the text's before BM25's saturation): its section's heading
 * (`section`, the last of its heading path), the headings above that (`headings`), its document's title (`title`)
 * and the terms its text defines (`defined`: src/ingest/outline.ts definedTerms, its headings, definition-list terms
 * and tables' first cells). A passage under a heading naming the term, or defining it, ranks above one that mentions
 * it as often.
 */
export interface FieldWeights { section: number; headings: number; title: number; defined: number }

/** a passage's fields besides its text, folded (the title given apart from the headings that repeat it) */
export interface PassageFields { section: string; headings: string; title: string; defined: string }

/**
 * The fields of a passage: its heading path (outermost first; a first heading equal to the title is the title's),
 * its document's title and the terms its text defines, each folded as the text is.
 */
export function passageFields(path: string[], title: string, defined: string[],
  foldText: (s: string) => string): PassageFields {
  const t = foldText(title)
  const folded = path.map(foldText)
  const own = folded.length > 0 ? folded[folded.length - 1] : ''
  const above = folded.slice(0, -1).filter((h, i) => !(i === 0 && h === t))
  return { section: own === t ? '' : own, headings: above.join('\n'), title: t,
    defined: defined.map(foldText).join('\n') }
}

/** a term's frequency over a passage's fields, each weighted (added to its text's before BM25's saturation) */
export function fieldFrequency(fields: PassageFields, stem: string[], w: FieldWeights): number {
  let f = 0
  if (w.section && fields.section) f += w.section * termFrequency(fields.section, stem)
  if (w.headings && fields.headings) f += w.headings * termFrequency(fields.headings, stem)
  if (w.title && fields.title) f += w.title * termFrequency(fields.title, stem)
  if (w.defined && fields.defined) f += w.defined * termFrequency(fields.defined, stem)
  return f
}

/**
 * The fewest neighbouring words of a folded text that hold every term of `wanted` (indices into `stems`; a term of
 * several words is placed by its first): the minimal span of term-proximity ranking (Tao and Zhai 2007). Infinity
 * when the text lacks one of them.
 */
export function minimalSpan(text: string, stems: string[][], wanted: number[]): number {
  const byStem = new Map<string, number>()
  wanted.forEach((i, k) => byStem.set(stems[i][0], k))
  // a word's rough stem is a prefix of it, of 3 characters or more unless the word is shorter: only words starting as
  // a wanted stem does are stemmed
  const heads = new Set(wanted.map((i) => stems[i][0].slice(0, 3)))
  const at: number[] = []
  const which: number[] = []
  let position = 0
  // (a regex of its own: matchAll starts where WORD_TOKEN's lastIndex was left by termFrequency)
  for (const m of text.matchAll(SPAN_TOKEN)) {
    const k = heads.has(m[0].slice(0, 3)) ? byStem.get(roughStem(m[0])) : undefined
    if (k !== undefined) { at.push(position); which.push(k) }
    position++
  }
  // the shortest window of matches holding each wanted term: two pointers over the matches in order
  const count = new Array<number>(wanted.length).fill(0)
  let held = 0
  let best = Infinity
  for (let hi = 0, lo = 0; hi < at.length; hi++) {
    if (count[which[hi]]++ === 0) held++
    while (held === wanted.length) {
      best = Math.min(best, at[hi] - at[lo] + 1)
      if (--count[which[lo]] === 0) held--
      lo++
    }
  }
  return best
}

const NAME_WORD = new RegExp(WORD_TOKEN.source, 'gu')

/**
 * The rough stems of the name a defined term or heading gives (its words before the first '(' or ':', folded):
 * `os.replace(src, dst)` → os, replac; `exception KeyboardInterrupt` → exception, keyboardinterrupt.
 */
export function nameStems(term: string, foldText: (s: string) => string): string[] {
  return (foldText(term.split(/[(:]/, 1)[0]).match(NAME_WORD) ?? []).map(roughStem)
}

/**
 * Whether a name (nameStems) is a query term (its words' stems): the same words, or the same after one leading word
 * (`class`, `exception`, a decorator's kind) — a passage defining `most_common([n])` names the term "most common",
 * one mentioning `most_common` in a sentence does not.
 */
export function namesTerm(name: string[], stem: string[]): boolean {
  const from = name.length - stem.length
  return (from === 0 || from === 1) && stem.every((s, k) => name[from + k] === s)
}

/**
 * A ranked list (best first) cut to `cap`, its first `after` entries as they are and the rest chosen greedily: each
 * entry's score counts `factor` times less for every passage of its document already in the list, so the places
 * after the first few go to documents not shown yet unless a shown one's passage is clearly better. Only the first
 * 3 × cap entries are weighed.
 */
export function diversify<T extends { score: number }>(ranked: T[], cap: number, after: number, factor: number,
  documentOf: (entry: T) => string): T[] {
  if (factor >= 1 || ranked.length <= after) return ranked.slice(0, cap)
  const out = ranked.slice(0, Math.min(after, cap))
  const shown = new Map<string, number>()
  for (const e of out) shown.set(documentOf(e), (shown.get(documentOf(e)) ?? 0) + 1)
  const left = ranked.slice(out.length, 3 * cap)
  while (out.length < cap && left.length > 0) {
    let best = 0
    let most = -Infinity
    left.forEach((e, k) => {
      const s = e.score * factor ** (shown.get(documentOf(e)) ?? 0)
      if (s > most) { most = s; best = k }
    })
    const [e] = left.splice(best, 1)
    shown.set(documentOf(e), (shown.get(documentOf(e)) ?? 0) + 1)
    out.push(e)
  }
  return out
}
