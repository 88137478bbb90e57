/**
 * The word-pair index (migration 0019): what a passage puts in it, and what a substring query of several words
 * asks of it. No server-side imports: the index worker loads this.
 *
 * Text is lower-cased (JavaScript) and split into runs of letters, digits and marks. Each two neighbouring runs
 * X and Y give one token per column: the last characters of X (2 in `near`, 6 in `far`), `_` when exactly one
 * space separates them (else `|`), and Y (its first PAIR_WORD_MAX characters): "weeks of parental" gives
 * `ks_of of_parental` and `weeks_of of_parental`, at consecutive positions. A passage holding a query holds the
 * query's runs: its inner runs as whole runs, the first as the end of a run, the last as the start of one; so it
 * holds the query's pairs as a phrase, the last pair as a prefix. The phrase is a filter only: the text is
 * checked after.
 *
 * Where JavaScript's lower-casing and the trigram index's case folding may disagree (a character whose lower
 * case is not one character or does not survive a round trip through upper case: `İ`, `ſ`, `ς`; and `Σ`, which
 * lower-cases by context), the passage also gets a token that pair queries match (AWKWARD_ASCII every one,
 * AWKWARD those with non-ASCII characters): its text is then checked as the trigram index would.
 */

const RUN = /[\p{L}\p{N}\p{M}]+/gu
/** a pair's second word is cut to this many characters */
export const PAIR_WORD_MAX = 32
/**
 * The tokens of a passage holding a character whose case folding JavaScript may not share with the index: one
 * that may fold to an ASCII letter (`ſ`, `İ`, `K`: an ASCII query may match there), and any other (`µ`, `ς`).
 */
export const AWKWARD_ASCII = '||'
export const AWKWARD = '|||'
const NON_ASCII = /\P{ASCII}/u
const ASCII_LETTER = /[a-z]/

const awkwardChars = new Map<string, 0 | 1 | 2>()
/** 0: JavaScript folds it as the index does; 1: it may fold to an ASCII letter; 2: it may fold otherwise */
function awkwardness(c: string): 0 | 1 | 2 {
  let known = awkwardChars.get(c)
  if (known === undefined) {
    const lower = c.toLowerCase()
    const upper = c.toUpperCase()
    const folded = [...upper].length === 1 ? upper.toLowerCase() : lower
    known = ASCII_LETTER.test(lower) || ASCII_LETTER.test(folded) ? 1
      : c === 'Σ' || [...lower].length !== 1 || folded !== lower ? 2 : 0
    if (awkwardChars.size < 10_000) awkwardChars.set(c, known)
  }
  return known
}

/** the kinds of awkwardness of the characters of `s`, as bits (see awkwardness) */
function awkwardIn(s: string): number {
  if (!NON_ASCII.test(s)) return 0
  let kinds = 0
  for (const c of s) if (c.charCodeAt(0) > 0x7f) kinds |= awkwardness(c)
  return kinds
}

/** whether `s` holds a character whose case folding may differ between JavaScript and the trigram index */
export const hasAwkward = (s: string) => awkwardIn(s) !== 0

/**
 * Whether a passage's text must be asked of the trigram index when JavaScript finds no `needle` (lower-cased) in
 * it: for an ASCII needle, only when the text holds a character that may fold to an ASCII letter.
 */
export function foldingMayDiffer(text: string, needle: string): boolean {
  if (!NON_ASCII.test(text)) return false
  if (NON_ASCII.test(needle)) return true
  for (const c of text) if (c.charCodeAt(0) > 0x7f && awkwardness(c) === 1) return true
  return false
}

/**
 * A phrase of more pairs than this asks FTS5 for every pair's positions in every passage holding them all (a
 * pasted paragraph of 130 pairs: seconds); part of the phrase narrows as well, the text being checked after.
 */
const MAX_PAIR_TERMS = 6
/**
 * The MAX_PAIR_TERMS neighbouring pairs of a long phrase most likely to be rare: the most characters in distinct
 * pairs ("of the of the of the" repeats two common pairs).
 */
function narrowest(terms: string[]): string[] {
  let best = 0
  let bestScore = -1
  for (let at = 0; at + MAX_PAIR_TERMS <= terms.length; at++) {
    const score = [...new Set(terms.slice(at, at + MAX_PAIR_TERMS))].reduce((n, t) => n + t.length, 0)
    if (score > bestScore) { best = at; bestScore = score }
  }
  return terms.slice(best, best + MAX_PAIR_TERMS)
}
/** a query's last word shorter than this (and not known whole) is left out */
const SHORT_PREFIX = 2
/** how much of a pair's first word each column keeps: its last 2 characters (`near`), its last 6 (`far`) */
export const PAIR_ENDS = { near: 2, far: 6 } as const
const lastOf = (run: string, n: number, ascii: boolean) => ascii ? run.slice(-n) : [...run].slice(-n).join('')
const firstMax = (run: string, ascii: boolean) => run.length <= PAIR_WORD_MAX ? run
  : ascii ? run.slice(0, PAIR_WORD_MAX) : [...run].slice(0, PAIR_WORD_MAX).join('')

/** The pair tokens of a passage's text, space-separated, in order: the index's two columns. */
export function pairTokens(text: string): { near: string; far: string } {
  const lower = text.toLowerCase()
  const ascii = !NON_ASCII.test(lower)
  const near: string[] = []
  const far: string[] = []
  if (!ascii) {
    const kinds = awkwardIn(text)
    if (kinds & 1) near.push(AWKWARD_ASCII)
    if (kinds & 2) near.push(AWKWARD)
  }
  let prev = ''
  let prevEnd = -1
  for (const m of lower.matchAll(RUN)) {
    const run = m[0]
    if (prevEnd >= 0) {
      const sep = m.index - prevEnd === 1 && lower.charCodeAt(prevEnd) === 32 ? '_' : '|'
      const next = sep + firstMax(run, ascii)
      near.push(lastOf(prev, PAIR_ENDS.near, ascii) + next)
      far.push(lastOf(prev, PAIR_ENDS.far, ascii) + next)
    }
    prev = run
    prevEnd = m.index + run.length
  }
  return { near: near.join(' '), far: far.join(' ') }
}

/**
 * The pair-index MATCH expression for the passages that may hold `query` (case-insensitive), or undefined when
 * the pairs cannot narrow it: fewer than two runs, a first run of one character that may be the end of a longer
 * word, or a character of uncertain case folding.
 *
 * The pairs are one phrase in one column: `far` when the first run is whole or long enough to give its last 6
 * characters, else `near` when it gives its last 2, else the first pair is left out.
 */
export function pairMatch(query: string): string | undefined {
  if (hasAwkward(query)) return undefined
  const lower = query.toLowerCase()
  const ascii = !NON_ASCII.test(lower)
  const runs = [...lower.matchAll(RUN)].map((m) => ({ run: m[0], at: m.index, end: m.index + m[0].length }))
  if (runs.length < 2) return undefined
  const length = (run: string) => ascii ? run.length : [...run].length
  // the first run may end a longer word, the last may begin one
  const firstWhole = runs[0].at > 0
  const first = length(runs[0].run)
  const column = firstWhole || first >= PAIR_ENDS.far ? 'far' : first >= PAIR_ENDS.near ? 'near' : undefined
  const terms: string[] = []
  for (let i = column ? 0 : 1; i + 1 < runs.length; i++) {
    const x = runs[i]
    const y = runs[i + 1]
    const yWhole = i + 2 < runs.length || y.end < lower.length
    const yChars = length(y.run)
    // a last word of one character is a prefix of thousands of pairs for FTS5 to merge, and narrows little (one
    // of two or three characters costs up to ~100 ms at 1,000,000 passages, "ed_to" *; leaving it out, more)
    if (!yWhole && yChars < SHORT_PREFIX) break
    const sep = lower.slice(x.end, y.at) === ' ' ? '_' : '|'
    const token = `"${lastOf(x.run, PAIR_ENDS[column ?? 'far'], ascii)}${sep}${firstMax(y.run, ascii)}"`
    terms.push(yWhole || yChars >= PAIR_WORD_MAX ? token : `${token} *`)
  }
  // one pair in `near` ("used in", "layer that"): its last 2 characters and a prefix stand for too many passages
  // (a common phrase is found sooner by the trigram walk, a rarer one through thousands of candidates)
  if (terms.length === 0 || (terms.length === 1 && column === 'near')) return undefined
  const chain = terms.length > MAX_PAIR_TERMS ? narrowest(terms) : terms
  // an ASCII query is found in the text of a passage of the second kind as JavaScript finds it
  const awkward = ascii ? `"${AWKWARD_ASCII}"` : `"${AWKWARD_ASCII}" OR "${AWKWARD}"`
  return `{${column ?? 'far'}}: (${chain.join(' + ')}) OR {near}: (${awkward})`
}
