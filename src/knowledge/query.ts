/** How a query becomes words for the word index, and how matches are marked in snippets. */

/** English function words and question words: they carry no topic, and BM25 would spend time on them. */
const STOP_WORDS = new Set(`
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can cannot could couldn't did didn't do does doesn't doing don't
down during each either else ever every few for from further get gets getting got had hadn't has
hasn't have haven't having he her here hers herself him himself his how i if in into is isn't it
it's its itself just let let's me might more most must my myself no nor not of off on once only or
other ought our ours ourselves out over own please same shall she should shouldn't so some such tell
than that that's the their theirs them themselves then there there's these they this those through
to too under until up upon us very was wasn't we were weren't what what's whatever when where
where's whether which while who whom whose why will with within without won't would wouldn't yes yet
you your yours yourself yourselves many much`.trim().split(/\s+/))

export const MAX_TERMS = 32

/** Case and diacritics folded, as the index's unicode61 tokenizer does (remove_diacritics 2). */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase()
}

const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu

/**
 * A dot between parts of a dotted name (`Counter.most_common`, `os.path`): a part of 2+ letters, digits or
 * underscores before it, one of 3+ starting with a letter after it (not `Node.js`, `e.g.`, `3.11`)
 */
const NAME_DOT = /(?<=[\p{L}\p{N}_]{2})\.(?=\p{L}[\p{L}\p{N}_]{2})/u

/**
 * The query's words: each whitespace-separated piece is split as the index splits text; a one-token
 * piece that is a stop word is dropped, a several-token piece ("e-mail", "snake_case") stays a phrase. A dotted name
 * is sought as written and by each of its parts: `Counter.most_common` as the phrase "counter most common", and
 * "counter" and "most common", since pages define a method under its class (`class collections.Counter` …
 * `most_common([n])`) more often than they write the two together. Folded, deduplicated, at most MAX_TERMS.
 */
export function queryTerms(query: string): string[][] {
  const terms: string[][] = []
  const seen = new Set<string>()
  const pieces = query.split(/\s+/).flatMap((piece) => {
    const parts = piece.split(NAME_DOT)
    return parts.length > 1 ? [piece, ...parts] : [piece]
  })
  for (const piece of pieces) {
    const tokens = (fold(piece.replace(/['’]s$/iu, '')).match(TOKEN) ?? [])
    if (tokens.length === 0) continue
    if (tokens.length === 1 && STOP_WORDS.has(tokens[0])) continue
    const key = tokens.join(' ')
    if (seen.has(key)) continue
    seen.add(key)
    terms.push(tokens)
    if (terms.length >= MAX_TERMS) break
  }
  return terms
}

/**
 * What a passage holding the whole query must hold in the word index: the query's inner runs of letters
 * and digits (the first and last may be parts of longer words) as whole words. When every inner run is
 * plain ASCII (split by the index exactly as here) they are one phrase, in order; otherwise the ASCII ones
 * each. Empty when the query has no inner run.
 */
export function innerWords(query: string): { phrase: boolean; words: string[] } {
  const inner = (query.match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? []).slice(1, -1)
  const ascii = inner.filter((r) => /^[A-Za-z0-9]+$/.test(r)).map((r) => r.toLowerCase())
  if (ascii.length === inner.length && ascii.length > 1) return { phrase: true, words: longestRun(ascii) }
  const words = [...new Set(ascii)]
  return { phrase: false,
    words: words.length <= MAX_INNER ? words : words.sort((a, b) => b.length - a.length).slice(0, MAX_INNER) }
}

/**
 * At most this many inner words are asked of the word index: a phrase of a pasted paragraph's hundred words makes
 * the probe step every one of their doclists, and part of it rules out as well (the longest words, likely the
 * rarest).
 */
const MAX_INNER = 8
const longestRun = (words: string[]) => bestWindow(words, MAX_INNER, (w) => w.reduce((n, x) => n + x.length, 0))

/**
 * The `size` neighbouring items of `items` with the highest `score` (the first such window on a tie; all of
 * them when there are no more): the part of a long query most likely to be rare.
 */
export function bestWindow(items: string[], size: number, score: (window: string[]) => number): string[] {
  if (items.length <= size) return items
  let best = 0
  let most = -1
  for (let at = 0; at + size <= items.length; at++) {
    const s = score(items.slice(at, at + size))
    if (s > most) { best = at; most = s }
  }
  return items.slice(best, best + size)
}

/** An FTS5 string literal: inside double quotes every character is literal; quotes are doubled. */
export function ftsPhrase(text: string): string {
  return `"${text.replace(/"/g, '""')}"`
}

/** The word-index MATCH expression: any of the terms, within the passages of the given reader tokens. */
export function wordsMatch(terms: string[][], readers: string[]): string {
  const text = terms.map((t) => ftsPhrase(t.join(' '))).join(' OR ')
  return `{readers}: (${readers.map(ftsPhrase).join(' OR ')}) AND {text}: (${text})`
}

/** The word-index MATCH expression for passages holding the inner words (src/knowledge/query.ts innerWords). */
export function innerWordsMatch(inner: { phrase: boolean; words: string[] }, readers: string[]): string {
  const text = inner.phrase ? ftsPhrase(inner.words.join(' ')) : inner.words.map(ftsPhrase).join(' AND ')
  return `{readers}: (${readers.map(ftsPhrase).join(' OR ')}) AND {text}: (${text})`
}

/** A light English stem, close enough to Porter's to find the words the index matched, for snippets. */
export function roughStem(word: string): string {
  let w = word
  for (const suffix of ['ational', 'ization', 'fulness', 'iveness', 'ingly', 'ation', 'ments', 'ment', 'ness', 'ings',
    'ing', 'edly', 'ies', 'ied', 'ed', 'es', 'ly', 's', 'e', 'y']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) { w = w.slice(0, -suffix.length); break }
  }
  return w
}

const SNIPPET_RADIUS = 80

/** A window of text around [at, at+length), the match in <mark>…</mark>. */
export function snippetAround(text: string, at: number, length: number): string {
  const from = Math.max(0, at - SNIPPET_RADIUS)
  const to = Math.min(text.length, at + length + SNIPPET_RADIUS)
  return (from > 0 ? '…' : '') + text.slice(from, at) + '<mark>' + text.slice(at, at + length) + '</mark>' +
    text.slice(at + length, to) + (to < text.length ? '…' : '')
}

/** Where the query's words occur in a text: [start, end) of each matching word, in order. */
export function wordMatches(text: string, terms: string[][]): Array<[number, number]> {
  const wanted = new Set(terms.flat().map(roughStem))
  const out: Array<[number, number]> = []
  for (const m of text.matchAll(TOKEN)) {
    if (wanted.has(roughStem(fold(m[0])))) out.push([m.index, m.index + m[0].length])
  }
  return out
}

/** A window around the densest run of matched words, each marked; the passage's start when none is found. */
export function wordsSnippet(text: string, terms: string[][]): string {
  const spans = wordMatches(text, terms)
  if (spans.length === 0) return text.slice(0, SNIPPET_RADIUS * 2) + (text.length > SNIPPET_RADIUS * 2 ? '…' : '')
  // the window of 2·radius characters holding the most matches
  let best = 0
  let bestCount = 0
  for (let i = 0, j = 0; i < spans.length; i++) {
    while (spans[j][0] < spans[i][0] - SNIPPET_RADIUS * 2) j++
    if (i - j + 1 > bestCount) { bestCount = i - j + 1; best = j }
  }
  const from = Math.max(0, spans[best][0] - SNIPPET_RADIUS / 2)
  const to = Math.min(text.length, from + SNIPPET_RADIUS * 2 + 40)
  let out = from > 0 ? '…' : ''
  let at = from
  for (const [s, e] of spans) {
    if (s < from || e > to) continue
    out += text.slice(at, s) + '<mark>' + text.slice(s, e) + '</mark>'
    at = e
  }
  return out + text.slice(at, to) + (to < text.length ? '…' : '')
}

/** a unit of at most this many code points repeated back to back ... */
const REPEAT_UNIT = 16
/** ... over more than this many code points makes a query refused (repetitionProblem) */
const REPEAT_SPAN = 32

/**
 * Why a query is refused, or undefined: a short unit repeated over a long stretch ("aaaa…", "zz zz zz …"). Such a
 * query is one trigram (or word) many times over: FTS5 checks a phrase's repeated token at every position of every
 * passage holding it, which a document of the same repetition makes cost seconds, and no reader needs it.
 */
export function repetitionProblem(query: string): string | undefined {
  const cps = [...query]
  for (let unit = 1; unit <= REPEAT_UNIT; unit++) {
    let run = 0
    for (let i = 0; i + unit < cps.length; i++) {
      run = cps[i] === cps[i + unit] ? run + 1 : 0
      if (run + unit > REPEAT_SPAN) {
        const repeated = cps.slice(i + 1 - run, i + 1 - run + unit).join('')
        return `the query repeats ${JSON.stringify(repeated)} over more than ${REPEAT_SPAN} characters: ` +
          'search for a shorter part of it'
      }
    }
  }
  return undefined
}
