/**
 * The word-pair index (migration 0019): what a passage puts in it, and what a substring query of several words
 * asks of it. No server-side imports: the index worker loads this.
 *
 * Text is folded as the trigram index folds it (src/knowledge/fold.ts) and split into units: runs of letters, digits
 * and marks, and single characters that are neither those nor white space (punctuation, symbols). Each two
 * neighbouring units X and Y give one token per column: the last characters of X (2 in `near`, 6 in `far`), `_` when
 * exactly one space separates them (else `|`: other white space, or none), and Y (its first PAIR_WORD_MAX
 * characters): "weeks of parental" gives `ks_of of_parental` and `weeks_of of_parental`, at consecutive positions;
 * "case, the" gives `se|, ,_the` (an ASCII punctuation character stands in a token as a private-use character, the
 * index's tokenizer splitting at ASCII punctuation). A passage holding a query holds the query's units: its inner
 * units whole, its first run as the end of a run, its last run as the start of one, and a punctuation character
 * always whole; so it holds the query's pairs as a phrase, the last pair as a prefix when it ends in a run. The
 * phrase is a filter only: the text is checked after, with the same folding.
 */
import { indexFold, isAscii } from './fold.js'
import { bestWindow } from './query.js'

/** a word: a run of letters, digits and marks (in text folded as the trigram index folds) */
export const RUN = /[\p{L}\p{N}\p{M}]+/gu
/** a unit of the pairs: a run (group 1), or one character that is neither a run's nor white space */
const UNIT = /([\p{L}\p{N}\p{M}]+)|[^\p{L}\p{N}\p{M}\s]/gu
/**
 * What the pair tokens are made of (kept with the index, src/knowledge/indexer.ts: another version empties it for the
 * index worker to fill again). 2: punctuation characters are units (before, only runs were, and `|` stood for whatever
 * separated them). 3: the vocabulary beside them (src/knowledge/word-vocabulary.ts) keeps the runs of 2 UTF-16 units
 * too, which the words a last run begins and the ends a first run of one character stands for need (NearEnds). 4: a
 * third column, `head` (migration 0026).
 */
export const PAIRS_VERSION = 4
/**
 * A unit as it stands in a token: the index's `ascii` tokenizer keeps letters, digits, `_`, `|` and every non-ASCII
 * character in a token and splits at any other ASCII character, so those stand as U+E000 + their code.
 */
const unitToken = (unit: string) => unit.length === 1 && unit < '\u0080' && !/[a-z0-9]/.test(unit)
  ? String.fromCharCode(0xe000 + unit.charCodeAt(0)) : unit
/** a pair's second word is cut to this many characters */
export const PAIR_WORD_MAX = 32
/**
 * Whether the pair index is behind the passages (the index worker catches up; the server starts it when so; tests
 * wait for it)
 */
export const PAIRS_BEHIND_SQL = `SELECT (SELECT indexed_through FROM knowledge_pairs_state)
  < (SELECT coalesce(max(rowid), 0) FROM knowledge_passages)`

/**
 * A phrase of more pairs than this asks FTS5 for every pair's positions in every passage holding them all (a
 * pasted paragraph of 130 pairs: seconds); part of the phrase narrows as well, the text being checked after.
 */
const MAX_PAIR_TERMS = 6
/**
 * The MAX_PAIR_TERMS neighbouring pairs of a long phrase most likely to be rare: the most characters in distinct
 * pairs ("of the of the of the" repeats two common pairs).
 */
const narrowest = (terms: string[]) => bestWindow(terms, MAX_PAIR_TERMS,
  (w) => [...new Set(w)].reduce((n, t) => n + t.length, 0))
/** the words a query's first run may end (the vocabulary, src/knowledge/word-vocabulary.ts), or undefined: unknown */
export type WordEnds = (run: string) => string[] | undefined
/**
 * The words of the vocabulary that start with a query's last run (src/knowledge/word-vocabulary.ts: every run of 2+
 * UTF-16 units the pair index has, added in the same transaction), or undefined when unknown or more than
 * MAX_LAST_FORMS
 */
export type WordStarts = (run: string) => string[] | undefined
/**
 * A last pair whose second word may go on is asked as each word it may be, exact, when at most this many: FTS5 steps
 * an exact token's doclist by its rowids from the other pairs' (`"ptions_to" + "to_the"`), where a prefix token's
 * doclists are all merged first (`"to_the" *`), many times the cost (`npm run bench -- search`, phrases).
 */
export const MAX_LAST_FORMS = 512
/**
 * More forms than this are ORed as tokens and ANDed with the phrase of the pairs before, not each a phrase with the
 * pair before: FTS5 opens an iterator on that pair per phrase, where ANDed it steps it once; the text is checked
 * after, adjacency or not
 */
const PHRASED_FORMS = 64
/**
 * At most this many forms are each the whole phrase, ORed: FTS5 steps a phrase's doclists together, its rarest pair
 * leading, where the rest's phrase ANDed apart finds its own matches first (`of the gyp-next`: `"of_the" + "he_gyp"
 * + "yp|-"` stepped `of_the` at each of ~300 `he_gyp` candidates, where `"-|next"` has 18)
 */
const WHOLE_PHRASES = 8
/**
 * The ends in `near` (last 2 characters) of the vocabulary's words that end with a character
 * (src/knowledge/word-vocabulary.ts: every run of 2+ UTF-16 units the pair index has, added in the same transaction),
 * or undefined when unknown or more than MAX_NEAR_ENDS
 */
export type NearEnds = (char: string) => string[] | undefined
/** a first run of one character is asked as at most this many ends in `near` (else left out) */
export const MAX_NEAR_ENDS = 128
/** at most this many distinct last 6 characters of those words are asked for a first run (else `near`) */
const MAX_FIRST_FORMS = 16
/**
 * a query cut in two after its first pair (`near` before, `far` after) shares a run of at least this many characters
 * between the parts: a shorter one is common, and a passage holding each part apart is then no sign of the query
 */
const SHARED_RUN = 5
/** a query's last word shorter than this (and not known whole) is left out */
const SHORT_PREFIX = 2
/** how much of a pair's first word each column keeps: its last 2 characters (`near`), its last 6 (`far`) */
export const PAIR_ENDS = { near: 2, far: 6 } as const
const lastOf = (run: string, n: number, ascii: boolean) => ascii ? run.slice(-n) : [...run].slice(-n).join('')
/**
 * A punctuation character's end in `far`: the last 6 characters of the text without white space that ends with it
 * (`brary,` in "library, so"), as they stand in tokens. In `near` it is the character alone (a query that starts
 * with it knows no more).
 */
const contextOf = (stretch: string, ascii: boolean) => lastPoints(stretch, PAIR_ENDS.far, ascii).map(unitToken).join('')
/**
 * The last `n` characters of a text, without spreading the whole of it (a stretch without white space may be a
 * passage's 20,000 characters, asked at each punctuation character in it): 2n UTF-16 units hold at least n of them.
 */
const lastPoints = (text: string, n: number, ascii: boolean) =>
  ascii ? [...text.slice(-n)] : [...text.slice(-2 * n)].slice(-n)
const firstMax = (run: string, ascii: boolean) => run.length <= PAIR_WORD_MAX ? run
  : ascii ? run.slice(0, PAIR_WORD_MAX) : [...run].slice(0, PAIR_WORD_MAX).join('')

/**
 * The units of folded text, in order: each run (`isRun`) or punctuation character as it stands in a token
 * (`token`; a run cut to PAIR_WORD_MAX characters), with where the text without white space that ends at it begins
 * (`stretch`), and a punctuation character's end in `far` (`context`: the last 6 characters of that text).
 */
function* unitsOf(lower: string, ascii: boolean) {
  let stretch = 0
  let end = -1
  for (const m of lower.matchAll(UNIT)) {
    const unit = m[0]
    const isRun = m[1] !== undefined
    if (m.index !== end) stretch = m.index
    end = m.index + unit.length
    yield { unit, isRun, token: isRun ? firstMax(unit, ascii) : unitToken(unit), at: m.index, end, stretch,
      context: isRun ? '' : contextOf(lower.slice(stretch, end), ascii) }
  }
}

/** The pair tokens of a passage's text, space-separated, in order: the index's three columns. */
export function pairTokens(text: string): { near: string; far: string; head: string } {
  const { near, far, head } = passageTokens(text)
  return { near, far, head }
}

/** a token's first character (a punctuation character's stand-in is one) */
const firstOf = (token: string) => String.fromCodePoint(token.codePointAt(0)!)

/**
 * The pair index's three columns, and the passage's runs in order (the run index's tokens,
 * src/knowledge/word-vocabulary.ts): the text folded and split once for all. `head` is `far` with the second unit cut
 * to its first character.
 */
export function passageTokens(text: string): { near: string; far: string; head: string; runs: string[] } {
  const lower = indexFold(text)
  const ascii = isAscii(lower)
  const near: string[] = []
  const far: string[] = []
  const head: string[] = []
  const runs: string[] = []
  // the previous unit's ends in each column
  let prevNear = ''
  let prevFar = ''
  let prevEnd = -1
  for (const { unit, isRun, token, at, end, context } of unitsOf(lower, ascii)) {
    if (isRun) runs.push(unit)
    if (prevEnd >= 0) {
      const sep = at - prevEnd === 1 && lower.charCodeAt(prevEnd) === 32 ? '_' : '|'
      near.push(prevNear + sep + token)
      far.push(prevFar + sep + token)
      head.push(prevFar + sep + firstOf(token))
    }
    prevEnd = end
    prevNear = isRun ? lastOf(unit, PAIR_ENDS.near, ascii) : token
    prevFar = isRun ? lastOf(unit, PAIR_ENDS.far, ascii) : context
  }
  return { near: near.join(' '), far: far.join(' '), head: head.join(' '), runs }
}

/**
 * the passages estimated to hold a pair token exactly, in a column (sampled from the index); with `and`, those holding
 * it and that one
 */
export type PairDensity = (column: PairColumn | 'head', token: string,
  and?: { column: PairColumn | 'head'; token: string }) => number
export type PairColumn = keyof typeof PAIR_ENDS
/**
 * A last pair asked as a prefix makes FTS5 merge the whole doclist of every token it begins, before the first
 * match, at a cost per posting (`substring.costs.prefixPosting`). Denser than this,
 * it is left out when other pairs remain (the text is checked after: the candidates narrow less).
 */
const DENSE_PREFIX = 20_000
/** a last prefix that cannot be left out, in more passages than this: the trigram walk instead */
const MERGED_TOO_DENSE = 200_000
/**
 * One pair of `near` (2 characters of its first word) stands for many phrases ("er_that": user, other, layer…):
 * asked alone only when its token is in at most this many passages, each of them read to be checked.
 */
const NEAR_ALONE = 5_000

/**
 * The pair-index MATCH expression for the passages that may hold `query` (case-insensitive), or undefined when
 * the pairs cannot narrow it: fewer than two units, or a first run of one character that may be the end of a
 * longer word and one pair left.
 *
 * The pairs are one phrase in one column: `far` when the first run is whole or long enough to give its last 6
 * characters, else `near` when it gives its last 2, else the first pair is left out. With `density` (the index's
 * own counts), a dense last prefix is left out and one `near` pair is asked when it is rare; the phrase with that
 * prefix is given too (`narrow`), with the passages holding the prefix's exact token (FTS5 merges at least their
 * postings for it): the candidates of `match` may prove so sparse in matches that merging the prefix once costs less
 * than reading them (index-walk.ts decides). With `endings`, a first run of 3–5 characters that may end a longer
 * word is asked in `far` as each of the last 6 characters of the words it ends (when at most MAX_FIRST_FORMS). With
 * `starts`, a last run of 2+ UTF-16 units that may begin a longer word is asked as each word of the vocabulary it
 * begins, exact (no prefix to merge, none left out), when at most MAX_LAST_FORMS. With `nearEnds`, a first run of one
 * character that may end a longer word is asked in `near` as itself and each end of 2 characters it may be the last
 * of (`a build tool,`: `a_build`, `ta_build`, `va_build`…, where without them its pair is left out and the passages
 * holding `build tool,` are read to find those after `a`).
 */
export function pairMatch(query: string, density?: PairDensity, endings?: WordEnds, starts?: WordStarts,
  nearEnds?: NearEnds):
  { match: string; narrow?: { match: string; postings: number } } | undefined {
  const lower = indexFold(query)
  const ascii = isAscii(lower)
  // the units (a punctuation character as it stands in a token)
  const runs = [...unitsOf(lower, ascii)].map((u) => ({ ...u, run: u.isRun ? u.unit : u.token }))
  if (runs.length < 2) return undefined
  const length = (run: string) => ascii ? run.length : [...run].length
  // the first run may end a longer word, the last may begin one; a punctuation character is whole
  const firstWhole = runs[0].at > 0 || !runs[0].isRun
  const first = length(runs[0].run)
  // a first run of 3–5 characters that may end a longer word: the words of the vocabulary that end with it give
  // the last 6 characters it may stand for (`check` → `check`, `echeck`, `lcheck`), each asked in `far`
  let firstForms: string[] | undefined
  if (!firstWhole && first >= 3 && first < PAIR_ENDS.far && endings) {
    const forms = [...new Set(endings(runs[0].run)?.map((w) => lastOf(w, PAIR_ENDS.far, isAscii(w))))]
    if (forms.length > 0 && forms.length <= MAX_FIRST_FORMS) firstForms = forms
  }
  // a first run of one character that may end a longer word: the ends in `near` it stands for (itself alone too)
  let nearForms: string[] | undefined
  if (!firstWhole && first === 1 && nearEnds) {
    const found = nearEnds(runs[0].run)
    if (found !== undefined) nearForms = [...new Set([runs[0].run, ...found])]
  }
  // each unit's end in each column, when the query tells it: a first run's when whole or long enough (or its forms);
  // a punctuation character's in `far` when the text without white space before it is in the query (preceded by
  // white space there) or gives 6 characters
  const ends = runs.map((u, i) => {
    if (!u.isRun) {
      // (each character of the context one code point: a punctuation character's stand-in too)
      const known = u.stretch > 0 || [...u.context].length >= PAIR_ENDS.far
      return { near: u.run as string | undefined, far: known ? u.context : undefined }
    }
    const whole = i > 0 || firstWhole
    const near = whole || first >= PAIR_ENDS.near || (i === 0 && nearForms)
    return { near: near ? lastOf(u.run, PAIR_ENDS.near, ascii) : undefined,
      far: whole || first >= PAIR_ENDS.far || (i === 0 && firstForms) ? lastOf(u.run, PAIR_ENDS.far, ascii)
        : undefined }
  })
  // the column whose known ends leave out the fewest first pairs (`far` when as many)
  const from = (column: PairColumn) => {
    let s = runs.length - 1
    while (s > 0 && ends[s - 1][column] !== undefined) s--
    return s
  }
  const [fromFar, fromNear] = [from('far'), from('near')]
  const column: PairColumn = fromFar <= fromNear ? 'far' : 'near'
  // `near` for the pairs before a unit whose end in `far` is unknown, and `far` from it on: the query cut in two at the
  // first run of the `far` pairs (a space before it), each part asked as a query of its own, ANDed (a passage holding
  // the query holds both), when each part keeps a phrase or a word `far` tells better (one pair alone before it, `on
  // the path` → `"on_the"` anywhere, would lose what makes the phrase rare). `not, then the`: `{near}: ("ot|," +
  // ",_then") AND {far}: ("not|," OR "cannot|,")` and `{far}: ("then_the" *)`, where `near` asked `"en_the"` (`when
  // the`, `often the`…) in 21 phrases with the dense `",_then"`, each stepped apart. After one pair, when the run
  // both parts share is long enough to be rare (`be removed in`: `{near}: ("be_removed")` and `{far}: ("emoved_in"
  // OR "emoved_inaccessible" OR …)`, where `near` ANDed the 342 forms of `ed_in` apart: most candidates are matches,
  // against a third); not `on the path` (`"on_the"` anywhere and
  // `the path` would lose what makes the phrase rare) nor `to a brace-expanded`, nor when all after it is a last
  // letter in `head` (`are passed a`: the counts decide, below)
  const sepOf = (i: number) => lower.slice(runs[i].end, runs[i + 1].at) === ' ' ? '_' : '|'
  // a last run of one character that may go on (asked in `head`, below)
  const lastRun = runs[runs.length - 1]
  const lastLetter = lastRun.isRun && length(lastRun.run) < SHORT_PREFIX && lastRun.end === lower.length
  const keyOf = (token: string, prefix: boolean) => `"${token}"${prefix ? ' *' : ''}`
  /** the first pair's tokens, exact, from the ends of its first run given (its second unit whole) */
  const firstPairOf = (firstEnds: string[]) => {
    const second = runs[1].isRun ? firstMax(runs[1].run, ascii) : runs[1].run
    return firstEnds.map((f) => keyOf(`${f}${sepOf(0)}${second}`, false)).join(' OR ')
  }
  if (column === 'near' && fromFar >= 1 && fromFar < runs.length - 1 && lower[runs[fromFar].at - 1] === ' ' &&
    (fromFar >= 2 ? runs.slice(fromFar, -1).some((u) => u.isRun && length(u.run) > PAIR_ENDS.near)
      : runs[1].isRun && length(runs[1].run) >= SHARED_RUN && !(runs.length === 3 && lastLetter))) {
    // (one pair before: its tokens in `near`, ORed, asked whatever its count, the part after narrowing; its first run
    // has no end in `far`, or `far` would begin there)
    const firstNear = nearForms ?? (ends[0].near === undefined ? undefined : [ends[0].near])
    const before = fromFar >= 2 ? pairMatch(`${lower.slice(0, runs[fromFar].end)} `, density, endings, starts, nearEnds)
      : firstNear && { match: `{near}: (${firstPairOf(firstNear)})`, narrow: undefined }
    const after = before && !before.narrow ? pairMatch(lower.slice(runs[fromFar].at - 1), density, endings, starts,
      nearEnds) : undefined
    if (before && after && !after.narrow) return { match: `(${before.match}) AND (${after.match})` }
  }
  /**
   * The phrases in `head` of a last pair whose second unit is one character `c` (any of them: one per form of a
   * first run): its `far` end with `c`, after the pair before with its second unit's first character
   */
  const headOf = (i: number): string[][] | undefined => {
    const last = (end: string) => `${end}${sepOf(i)}${runs[i + 1].run}`
    if (i === 0) return firstForms ? firstForms.map((f) => [last(f)]) : ends[0].far === undefined ? undefined
      : [[last(ends[0].far)]]
    const befores = i === 1 && firstForms ? firstForms : ends[i - 1].far === undefined ? undefined : [ends[i - 1].far]
    const end = ends[i].far
    if (end === undefined) return undefined
    // (without the pair before when its end in `far` is unknown: `are passed a` → `"passed_a"`, ANDed with
    // `"re_passed"`)
    if (befores === undefined) return [[last(end)]]
    return befores.map((b) => [`${b}${sepOf(i - 1)}${firstOf(runs[i].run)}`, last(end)])
  }
  let headPhrases: string[][] | undefined
  // a pair's token; `prefix` when its second word may go on; `alts`: a first pair's forms (ORed, each a prefix when
  // it is); `exact`: a last pair's forms, each exact (in place of the prefix)
  const terms: Array<{ token: string; prefix: boolean; alts?: string[]; exact?: string[] }> = []
  for (let i = Math.min(fromFar, fromNear); i + 1 < runs.length; i++) {
    const y = runs[i + 1]
    const yWhole = i + 2 < runs.length || y.end < lower.length || !y.isRun
    const yChars = length(y.run)
    const sep = sepOf(i)
    // a last word of one character is a prefix of hundreds of thousands of pairs for FTS5 to merge (`to_a` *: every
    // word after `to` that begins with `a`), and begins too many words of the vocabulary to ask each: `head` keeps
    // a pair's second unit to its first character, so its pair is asked there, exact, in a phrase with the pair
    // before (`resolve to a`: `{head}: ("esolve_t" + "to_a")`, ANDed with the rest), when `far` knows their ends;
    // else it is left out
    if (!yWhole && yChars < SHORT_PREFIX) {
      headPhrases = headOf(i)
      break
    }
    // the first pair's forms: the first run's ends in the column (the last 6 characters of the words it may end in
    // `far`, the last 2 in `near` for a run of one character)
    const firstEnds = i > 0 ? undefined : column === 'far' ? firstForms : nearForms
    let alts = firstEnds?.map((f) => `${f}${sep}${firstMax(y.run, ascii)}`)
    const prefix = !yWhole && yChars < PAIR_WORD_MAX
    // the words the last run may begin: itself and the vocabulary's, as they stand in a token (cut); with a first
    // pair's forms, each of theirs (counted before they are made)
    const words = prefix && y.isRun && y.run.length >= 2 ? starts?.(y.run) : undefined
    let exact: string[] | undefined
    if (words !== undefined && (words.length + 1) * (firstEnds?.length ?? 1) <= MAX_LAST_FORMS * 2) {
      const seconds = [...new Set([y.run, ...words].map((w) => firstMax(w, isAscii(w))))]
      const firsts = alts ? firstEnds! : [ends[i][column]!]
      if (firsts.length * seconds.length <= MAX_LAST_FORMS) {
        exact = firsts.flatMap((f) => seconds.map((w) => `${f}${sep}${w}`))
        alts = undefined
      }
    }
    terms.push({ token: `${ends[i][column]}${sep}${firstMax(y.run, ascii)}`, prefix, alts, exact })
  }
  // asked as a prefix (merged whole by FTS5 before the first match)
  const open = (t: (typeof terms)[number]) => t.prefix && t.exact === undefined
  // one pair whose second word may go on (`this is`): its prefix alone is merged whole for each form (`this_is` *,
  // where the trigram walk finds such a common phrase at once); asked as without the vocabulary, unless the index's
  // counts put its forms in at most NEAR_ALONE passages together (`layer that`: `layer_that` *, `player_that` *,
  // fewer candidates than the run index's)
  // (counted only then: each count reads the index)
  const formsRare = () => density && column === 'far' && terms[0]?.alts &&
    terms[0].alts.reduce((n, a) => n + density('far', a), 0) <= NEAR_ALONE
  if (firstForms && terms.length === 1 && open(terms[0]) && !formsRare()) {
    return pairMatch(query, density, undefined, starts)
  }
  // and a first run of one character asked as its ends: left out, as without them
  if (nearForms && column === 'near' && terms.length === 1 && open(terms[0])) {
    return pairMatch(query, density, endings, starts)
  }
  const last = terms[terms.length - 1]
  // the phrase of the narrowest window of pairs. A first pair's forms are ORed and ANDed with the phrase of the rest
  // (one phrase per form would make FTS5 merge a last prefix's doclists once per form: 16 forms of `… in_the *`;
  // the text is checked after, adjacency or not). A last pair's exact forms:
  // up to WHOLE_PHRASES each the whole phrase, up to PHRASED_FORMS each a phrase with the pair before, more ORed, both
  // ANDed with the phrase of the rest (FTS5 would step the rest's doclists once per form: `"it|'" + "'|s" +
  // "s_better" + "er_to"`, 65 forms of `to`). With one pair and first
  // forms, a phrase per pair of forms, when at most MAX_LAST_FORMS; with first forms alone, one phrase per form when
  // the window is two pairs, the last whole.
  const phraseOf = (ts: typeof terms) => {
    // (the window chosen as for the prefix)
    const keys = ts.map((t) => keyOf(t.token, t.prefix))
    const best = narrowest(keys)
    const at = keys.findIndex((_, s) => best.every((k, i) => keys[s + i] === k))
    const kept = keys.slice(at, at + Math.min(keys.length, MAX_PAIR_TERMS)).map((k, i) =>
      i + at === ts.length - 1 ? keyOf(ts[i + at].token, open(ts[i + at])) : k)
    const heads = at === 0 ? ts[0].alts?.map((a) => keyOf(a, ts[0].prefix)) : undefined
    const exact = at + kept.length === ts.length ? ts[ts.length - 1].exact?.map((f) => keyOf(f, false)) : undefined
    const anyOf = (phrases: string[][]) => `(${phrases.map((p) => `(${p.join(' + ')})`).join(' OR ')})`
    const parts: string[] = []
    // the pairs between the first's forms and the last's
    const body = kept.slice(heads ? 1 : 0, exact ? -1 : undefined)
    const lastWhole = !open(ts[ts.length - 1]) || at + kept.length < ts.length
    if (heads && body.length === 0 && exact && heads.length * exact.length <= MAX_LAST_FORMS) {
      parts.push(anyOf(heads.flatMap((h) => exact.map((f) => [h, f]))))
    } else if (heads && body.length === 1 && !exact && lastWhole) {
      parts.push(anyOf(heads.map((h) => [h, body[0]])))
    } else {
      if (heads) parts.push(`(${heads.join(' OR ')})`)
      if (exact && exact.length <= WHOLE_PHRASES) {
        parts.push(anyOf(exact.map((f) => [...body, f])))
      } else {
        if (body.length > 1 || (body.length === 1 && (!exact || exact.length > PHRASED_FORMS))) {
          parts.push(`(${body.join(' + ')})`)
        }
        if (exact && exact.length > PHRASED_FORMS && body.length > 0) parts.push(`(${exact.join(' OR ')})`)
        else if (exact) parts.push(anyOf(exact.map((f) => body.length > 0 ? [body[body.length - 1], f] : [f])))
      }
    }
    // (a first pair's forms alone wrapped again, as an AND of one)
    return `{${column}}: ${parts.length === 1 && parts[0] !== `(${heads?.join(' OR ')})` ? parts[0]
      : `(${parts.join(' AND ')})`}`
  }
  // the passages holding a pair (all forms of the first; not counted for the ends of a first run of one character,
  // as many as 128)
  const densityOf = (t: (typeof terms)[number]) => !t.alts ? density!(column, t.token)
    : column === 'near' ? Infinity : t.alts.reduce((n, a) => n + density!(column, a), 0)
  let narrow: { match: string; postings: number } | undefined
  if (density && terms.length > 1 && open(last)) {
    // left out when the other pairs narrow far more than it would, and can be asked without it
    // (the count is the exact token's: those it begins add to what FTS5 merges)
    const dense = densityOf(last)
    if (dense > DENSE_PREFIX) {
      const rest = Math.min(...terms.slice(0, -1).map(densityOf))
      // one `near` pair left must be rare enough to be asked alone
      if (rest * 4 <= dense && (terms.length > 2 || column === 'far' || rest <= DENSE_PREFIX)) {
        narrow = { match: phraseOf(terms), postings: dense }
        terms.pop()
      } else if (dense > MERGED_TOO_DENSE) {
        // every pair common, and the prefix merged whole before the first match (`date, the`: `,_the` *, hundreds of
        // thousands of postings): the trigram walk finds such a common phrase at once
        return undefined
      }
    }
  } else if (terms.length === 1 && column === 'near' && !nearForms && !(headPhrases && headPhrases[0].length > 1) &&
    !(density && (Math.min(density(column, last.token), headPhrases ? density('head', headPhrases[0][0]) : Infinity) <=
      NEAR_ALONE || (headPhrases && density(column, last.token, { column: 'head', token: headPhrases[0][0] }) <=
      NEAR_ALONE)))) {
    // one pair in `near` ("used in", "layer that"): its last 2 characters and a prefix stand for too many passages
    // (a common phrase is found sooner by the trigram walk, a rarer one through thousands of candidates); not the
    // ends of a first run of one character, each of them a match's, nor with a phrase in `head`, nor with one token
    // there when it is rare or the passages holding both are few (`are passed a`: `"re_passed"` in 9,280 passages,
    // `"passed_a"` in 12,829, both in 1,085, of which 881 hold the query: most candidates are matches, where the
    // trigram walk reads many times the pages)
    return undefined
  } else if (terms.length === 1 && open(last) && density && density(column, last.token) > DENSE_PREFIX) {
    // one pair whose second word may go on, in many passages (`, the`: `,_the` *, `,_then`, `,_there`…): FTS5 would
    // merge the doclist of every token it begins before the first match, where the trigram walk finds such a common
    // phrase at once
    return undefined
  }
  // a last pair of one character, in `head` (any of its phrases), ANDed
  const inHead = headPhrases &&
    `{head}: (${headPhrases.map((p) => `(${p.map((k) => keyOf(k, false)).join(' + ')})`).join(' OR ')})`
  if (terms.length === 0) return inHead ? { match: inHead } : undefined
  // the phrase in `near` from the first pair, whose first run has forms in `far`: that pair in `far` too, ANDed. `near`
  // is chosen when the end in `far` of a unit after the first is unknown (`not, then the`: the comma's is the last 6
  // characters before it without a space, punctuation included), and there `"ot|,"` stands for `got,`, `snapshot,`…:
  // `"not|," OR "cannot|,"` left 139 candidates of 1,752 (110 matches). (A first run whole or of 6+ characters would
  // give the comma's end too: the phrase would be in `far`.)
  const firstFar = column === 'near' && Math.min(fromFar, fromNear) === 0 && firstForms
    ? `{far}: (${firstPairOf(firstForms)})` : undefined
  const withHead = (match: string) => [match, inHead, firstFar].filter((m) => m !== undefined).join(' AND ')
  return { match: withHead(phraseOf(terms)), narrow: narrow && { ...narrow, match: withHead(narrow.match) } }
}
