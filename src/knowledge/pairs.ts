/**
 * The word-pair index (migration 0019): what a passage puts in it, and what a substring query of several words
 * asks of it. No server-side imports: the index worker loads this.
 *
 * Text is lower-cased (JavaScript) and split into runs of letters, digits and marks. Each two neighbouring runs
 * X and Y give one token: the last two characters of X, `_` when exactly one space separates them (else `|`),
 * and Y (its first PAIR_WORD_MAX characters): "weeks of parental" gives `ks_of of_parental`, at consecutive
 * positions. A passage holding a query holds the query's runs: its inner runs as whole runs, the first as the
 * end of a run, the last as the start of one; so it holds the query's pairs as a phrase, the last pair as a
 * prefix. The phrase is a filter only: the text is checked after.
 *
 * Where JavaScript's lower-casing and the trigram index's case folding may disagree (a character whose lower
 * case is not one character or does not survive a round trip through upper case: `İ`, `ſ`, `ς`; and `Σ`, which
 * lower-cases by context), the passage also gets AWKWARD, which every pair query matches: its text is then
 * checked as the trigram index would.
 */

const RUN = /[\p{L}\p{N}\p{M}]+/gu
/** a pair's second word is cut to this many characters */
export const PAIR_WORD_MAX = 32
/** the token of a passage holding a character whose case folding JavaScript may not share with the index */
export const AWKWARD = '||'
const NON_ASCII = /\P{ASCII}/u

const awkwardChars = new Map<string, boolean>()
function isAwkward(c: string): boolean {
  let known = awkwardChars.get(c)
  if (known === undefined) {
    const lower = c.toLowerCase()
    const upper = c.toUpperCase()
    known = c === 'Σ' || [...lower].length !== 1 || ([...upper].length === 1 && upper.toLowerCase() !== lower)
    if (awkwardChars.size < 10_000) awkwardChars.set(c, known)
  }
  return known
}

/** whether `s` holds a character whose case folding may differ between JavaScript and the trigram index */
export function hasAwkward(s: string): boolean {
  if (!NON_ASCII.test(s)) return false
  for (const c of s) if (c.charCodeAt(0) > 0x7f && isAwkward(c)) return true
  return false
}

const lastTwo = (run: string, ascii: boolean) => ascii ? run.slice(-2) : [...run].slice(-2).join('')
const firstMax = (run: string, ascii: boolean) => run.length <= PAIR_WORD_MAX ? run
  : ascii ? run.slice(0, PAIR_WORD_MAX) : [...run].slice(0, PAIR_WORD_MAX).join('')

/** The pair tokens of a passage's text, space-separated, in order (the index's column value). */
export function pairTokens(text: string): string {
  const lower = text.toLowerCase()
  const ascii = !NON_ASCII.test(lower)
  const out: string[] = ascii || !hasAwkward(text) ? [] : [AWKWARD]
  let prev = ''
  let prevEnd = -1
  for (const m of lower.matchAll(RUN)) {
    const run = m[0]
    if (prevEnd >= 0) {
      const sep = m.index - prevEnd === 1 && lower.charCodeAt(prevEnd) === 32 ? '_' : '|'
      out.push(lastTwo(prev, ascii) + sep + firstMax(run, ascii))
    }
    prev = run
    prevEnd = m.index + run.length
  }
  return out.join(' ')
}

/**
 * The pair-index MATCH expression for the passages that may hold `query` (case-insensitive), or undefined when
 * the pairs cannot narrow it: fewer than two runs, a first run of one character that may be the end of a longer
 * word, or a character of uncertain case folding.
 */
export function pairMatch(query: string): string | undefined {
  if (hasAwkward(query)) return undefined
  const lower = query.toLowerCase()
  const ascii = !NON_ASCII.test(lower)
  const runs = [...lower.matchAll(RUN)].map((m) => ({ run: m[0], at: m.index, end: m.index + m[0].length }))
  const terms: Array<{ at: number; term: string }> = []
  for (let i = 0; i + 1 < runs.length; i++) {
    const x = runs[i]
    const y = runs[i + 1]
    // the first run may end a longer word, the last may begin one
    const xWhole = i > 0 || x.at > 0
    const yWhole = i + 2 < runs.length || y.end < lower.length
    const xChars = ascii ? x.run.length : [...x.run].length
    if (!xWhole && xChars < 2) continue
    const yChars = ascii ? y.run.length : [...y.run].length
    // a last word of one character: a prefix with thousands of pairs to merge, and little to narrow
    if (!yWhole && yChars < 2) continue
    const sep = lower.slice(x.end, y.at) === ' ' ? '_' : '|'
    const token = `"${lastTwo(x.run, ascii)}${sep}${firstMax(y.run, ascii)}"`
    terms.push({ at: i, term: yWhole || yChars >= PAIR_WORD_MAX ? token : `${token} *` })
  }
  if (terms.length === 0) return undefined
  // neighbouring pairs make one phrase (FTS5's `+`); a pair left out splits the phrase
  const phrases: string[][] = []
  for (const [k, t] of terms.entries()) {
    if (k > 0 && terms[k - 1].at === t.at - 1) phrases[phrases.length - 1].push(t.term)
    else phrases.push([t.term])
  }
  return `(${phrases.map((p) => p.join(' + ')).join(' AND ')}) OR "${AWKWARD}"`
}
