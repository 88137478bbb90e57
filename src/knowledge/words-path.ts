/**
 * The words path: `words-exact` (FTS5's bm25() over every match) and `words-bounded` (each term's postings read,
 * the candidates where the rare terms are, ranked by BM25 in JavaScript), planned by planner.ts planWords from the
 * figures read here.
 */
import type Database from 'better-sqlite3'
import { readableParams, readableWhere, readerTokens, type DocFilters, type Reader } from './readers.js'
import { fold, ftsPhrase, innerWords, queryTerms, roughStem, wordsMatch, wordsSnippet } from './query.js'
import type { KnowledgeStore } from './store.js'
import { DOC_COLUMNS, type HitRow } from './index-walk.js'
import { isAscii } from './fold.js'
import { lazy } from './lazy.js'
import { planWords, type WordsEvidence, type WordsPlan } from './planner.js'
import type { SearchSettings } from './search-settings.js'
import type { ReaderStatistics } from './reader-statistics.js'
import type { FilterSpans } from './filter-spans.js'
import { BudgetSpent, type Scored, type SearchBudget } from './hits.js'
import { B, intersects, K1, mergePostings, termFrequency, topEntries, wordCount } from './word-ranking.js'

/** the words path's plan, hits, and what its postings showed for hybrid's substring part */
export interface WordsOutcome { plan: WordsPlan; hits: Scored[]; evidence: WordsEvidence }

/**
 * a range of rowids is walked in windows of this many: FTS5 walks back from a high bound at about the cost of the
 * whole doclist, so each window is read in ascending order
 */
const RANGE_WINDOW = 8192n

export function createWordsPath(sqlite: Database.Database, store: KnowledgeStore, stats: ReaderStatistics,
  spans: FilterSpans, settings: SearchSettings) {
  const { postingsPerTerm: POSTINGS_PER_TERM, exactPostings: EXACT_POSTINGS, rescore, commonMargin,
    everyTerms: EVERY_TERMS, fallbackRanges: FALLBACK_RANGES, filteredJoins: FILTERED_JOINS,
    seekMeetings: SEEK_MEETINGS, sought: SOUGHT, probe: PROBE } = settings.words
  const { maxWidening: MAX_WIDENING, fallbackPostings: FALLBACK_POSTINGS } = settings.filters
  const { span: filterSpan, ranges: filteredRanges, passing: passingFilter } = spans
  // Without category or tag filters, the readers tokens already say what the caller can read: the index
  // ranks alone (FTS5 in C, no joins per match) and the documents join only checks the best few. With
  // those filters, every match is joined and filtered before ranking.
  const wordsSql = (filters: DocFilters) => filters.category || filters.tags?.length
    ? `SELECT p.rowid, p.id, p.text, p.chunk_index, c.* FROM (
        SELECT knowledge_passages_words.rowid AS rid, bm25(knowledge_passages_words, 1.0, 0.0) AS bm, ${DOC_COLUMNS}
        FROM knowledge_passages_words
        JOIN knowledge_passages pp ON pp.rowid = knowledge_passages_words.rowid
        JOIN knowledge_documents d ON d.id = pp.document_id
        WHERE knowledge_passages_words MATCH @match AND ${readableWhere(filters)}
        ORDER BY bm LIMIT +@cap) c
      JOIN knowledge_passages p ON p.rowid = c.rid
      ORDER BY c.bm`
    : `SELECT p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}, w.bm FROM (
        SELECT rowid AS rid, bm25(knowledge_passages_words, 1.0, 0.0) AS bm FROM knowledge_passages_words
        WHERE knowledge_passages_words MATCH @match ORDER BY bm LIMIT +@cap) w
      JOIN knowledge_passages p ON p.rowid = w.rid
      JOIN knowledge_documents d ON d.id = p.document_id
      WHERE ${readableWhere(filters)}
      ORDER BY w.bm`

  const byRowids = (filters: DocFilters) => `
    SELECT p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}
    FROM knowledge_passages p JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}`
  const postingsOf = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ?
    ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsBefore = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsWithin = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid`).pluck()
  function exactWords(reader: Reader, filters: DocFilters, terms: string[][], tokens: string[], cap: number): Scored[] {
    const rows = store.prepared(wordsSql(filters)).all({ ...readableParams(reader, filters),
      match: wordsMatch(terms, tokens), cap }) as
      Array<HitRow & { bm: number }>
    return rows.map((row) => ({ row, score: -row.bm, snippet: () => wordsSnippet(row.text, terms) }))
  }

  /**
   * Word search at scale. FTS5's bm25() costs time for every passage matching any term, and a question's
   * words match tens of thousands at a million passages. So: each term's postings are read (rowids only,
   * newest first, at most POSTINGS_PER_TERM; a term whose first `probe` postings already show it common stops
   * there); when all of them together are few (a small corpus or a small reader), FTS5 ranks every match
   * exactly. Otherwise the candidates are the passages holding the rare terms (those read whole), ranked by
   * the IDF of the terms they hold (the common ones sought at the rare rowids), and — when every term is
   * common — the passages holding all of them; the best `rescore` are read and ranked by BM25 over all terms
   * in JavaScript (term frequencies from the text, stemmed lightly; a posting counts as at least one).
   */
  // one read transaction: every walk sees the snapshot the filtered ranges were read in (a passage indexed after
  // the ranges were read is not walked in part)
  const words = sqlite.transaction(wordsIn)

  /**
   * The words path, planned (planner.ts planWords) and run: `evidence` (asked by hybrid) is what the postings showed
   * of the passages that may hold the whole query
   */
  function wordsIn(reader: Reader, filters: DocFilters, query: string, cap: number, evidenceWanted: boolean,
    budget?: SearchBudget): WordsOutcome {
    // between walks: a spent budget ends the words step (it then adds nothing)
    const check = () => { if (budget?.expired()) throw new BudgetSpent() }
    const terms = queryTerms(query)
    const tokens = readerTokens(reader, filters.scope)
    const filtered = !!(filters.category || filters.tags?.length)
    // a category or tag filter: the walks stay inside the filtered documents' rowid ranges
    const found = terms.length > 0 && tokens.length > 0 && filtered ? filteredRanges(reader, filters) : 'all'
    // (a filter leaving out no passage: the walks as without it, and bm25() as without it: the same passages, without
    // joining every match to its document first)
    const ranges = found === 'all' || found === undefined ? undefined : found
    const exactFilters = found === 'all' ? { scope: filters.scope } : filters
    const joined = filtered && found !== 'all'
    const corpus = stats.corpus()
    // a reader of (almost) everything walks the terms alone and filters the few best; others walk their own
    const readable = stats.readable(reader, { scope: filters.scope })
    // a filter of too many documents or stretches to walk inside (bm25() over every match joined to its documents
    // reads every match of the whole index): the walks as without it, the best candidates kept in
    // ranked order as long as they pass it, `widen` times as many sought as without a filter
    const span = found === undefined ? filterSpan(reader, filters) : undefined
    const postFilter = span !== undefined
    const widen = span ? Math.max(1, Math.min(MAX_WIDENING, Math.ceil(readable / Math.max(span.passages, 1)))) : 1
    // a common term's document frequency, from how far back its newest postings reach (terms spread evenly)
    const reach = (p: number[]) => Math.min(corpus.n, p.length * corpus.n / Math.max(1, corpus.n - p[p.length - 1]))
    // bm25() first counts every passage of the index holding each term (its IDF), whoever asks, a common term's
    // whole doclist. So it ranks exactly when the terms are rare in the whole index, and the reader's
    // matches are few (a reader of few passages, or few postings below)
    const inIndex = (t: string[]) => stats.passagesWith(t, (probe) => {
      const first = postingsOf.all(`{text}: ${ftsPhrase(t.join(' '))}`, probe) as number[]
      return first.length < probe ? first.length : reach(first)
    })
    // with a category or tag filter, bm25() is asked of every match in the index, each joined to its passage and
    // document before the filter (wordsSql): only when those are few (each is a page read on a cold cache)
    const rareEverywhere = lazy(() => terms.every((t) => inIndex(t) <= EXACT_POSTINGS) &&
      (!joined || terms.reduce((n, t) => n + inIndex(t), 0) <= FILTERED_JOINS))
    const own = !ranges && readable < corpus.n * 0.9
    const readersPart = own ? `{readers}: (${tokens.map(ftsPhrase).join(' OR ')}) AND ` : ''
    const matchOf = (t: string[]) => `${readersPart}{text}: ${ftsPhrase(t.join(' '))}`
    // each term's newest postings: all of a rare one; of a common one (more than POSTINGS_PER_TERM) only the
    // first `probe` when they already show it common (the rest would serve only its df estimate), else
    // POSTINGS_PER_TERM + 1
    // a long query (a pasted paragraph: up to MAX_TERMS words) shares what 6 terms would read
    const perTerm = Math.max(Math.min(PROBE, POSTINGS_PER_TERM),
      Math.min(POSTINGS_PER_TERM, Math.floor(POSTINGS_PER_TERM * 6 / terms.length)))
    const probe = Math.min(PROBE, perTerm)
    // the newest `most` rowids matching, below `before`: in the whole index, or in the filtered ranges
    const walk = (match: string, most: number, before?: number) => walkIn(ranges, match, most, before)
    const walkIn = (ranges: Array<[bigint, bigint]> | undefined, match: string, most: number,
      before?: number): number[] => {
      if (!ranges) {
        return (before === undefined ? postingsOf.all(match, most) : postingsBefore.all(match, before, most)) as
          number[]
      }
      // each range in windows of rowids read in ascending order (FTS5 walks back from a high bound in descending
      // order at about the cost of the whole doclist), newest window first
      const out: number[] = []
      for (const [lo, hi] of ranges) {
        check()
        let top = before !== undefined && BigInt(before) < hi ? BigInt(before) : hi
        while (top > lo && out.length < most) {
          const from = top - RANGE_WINDOW > lo ? top - RANGE_WINDOW : lo
          const got = postingsWithin.all(match, from, top) as number[]
          for (let k = got.length - 1; k >= 0 && out.length < most; k--) out.push(got[k])
          top = from
        }
        if (out.length >= most) break
      }
      return out
    }
    /** each term's postings, and whether they are all of its postings (a rare term) */
    const read = lazy(() => {
      const complete: boolean[] = []
      const postings = terms.map((t, i) => {
        check()
        const first = walk(matchOf(t), probe)
        complete[i] = first.length < probe
        // (the filtered ranges' postings say nothing of a term's frequency in the whole index)
        if (complete[i] || (!ranges && reach(first) > commonMargin * perTerm)) return first
        const p = first.concat(walk(matchOf(t), perTerm + 1 - first.length, first[first.length - 1]))
        complete[i] = p.length <= perTerm
        return p
      })
      return { postings, complete }
    })
    const plan = planWords({
      terms: terms.length,
      readsNothing: tokens.length === 0,
      filter: () => found === undefined ? 'post-filter' : found === 'all' ? (filtered ? 'all' : 'none')
        : found.length === 0 ? 'empty' : 'ranges',
      readable: () => readable,
      rareEverywhere,
      postings: () => read().postings.reduce((n, p, i) => n + (read().complete[i] ? p.length : EXACT_POSTINGS + 1),
        0),
      narrowed: () => own || !!ranges || postFilter
    }, settings)
    if (plan.kind === 'nothing') return { plan, hits: [], evidence: { none: found !== undefined && found !== 'all' } }
    if (plan.kind === 'words-exact' && plan.basis === 'reader') {
      return { plan, hits: exactWords(reader, exactFilters, terms, tokens, cap), evidence: { none: false } }
    }
    const { postings, complete } = read()
    // a passage holding the whole query holds each of its inner words as a word, so it is in each such term's
    // postings: the rare ones' lists must meet (and below, hold the common inner terms where they meet)
    const inner = new Set(evidenceWanted ? innerWords(query).words : [])
    const innerTerms = terms.map((_, i) => i).filter((i) => terms[i].length === 1 && inner.has(terms[i][0]))
    let none = innerTerms.some((i) => complete[i]) &&
      !intersects(innerTerms.filter((i) => complete[i]).map((i) => postings[i]))
    if (plan.kind === 'words-exact') {
      return { plan, hits: exactWords(reader, exactFilters, terms, tokens, cap), evidence: { none } }
    }
    const idf = (df: number) => Math.max(1e-6, Math.log((corpus.n - df + 0.5) / (df + 0.5)))
    // (inside a filter's ranges, a term's postings say how often it is there, not in the index whose IDF bm25() uses:
    // a common term met in a few sparse ranges looked rare)
    const dfs = postings.map((p, i) => (ranges ? inIndex(terms[i]) : complete[i] ? p.length : reach(p)))
    const weights = dfs.map(idf)
    // the EVERY_TERMS rarest words: what passages holding every word are sought by, and the filter's fallback
    const strongest = terms.map((_, i) => i).sort((x, y) => weights[y] - weights[x]).slice(0, EVERY_TERMS)
    // which terms a candidate's postings showed (the first 31; later ones are counted from the text alone)
    const bit = (i: number) => (i < 31 ? 1 << i : 0)
    // the candidates: the rare terms' postings merged (each list is newest first), with the IDF they add up to
    const { rowids, weight, held } = mergePostings(postings.filter((_, i) => complete[i]),
      weights.filter((_, i) => complete[i]), terms.map((_, i) => bit(i)).filter((_, i) => complete[i]))
    // the common terms' weight where they meet the rare ones: FTS5 seeks the common doclists at the rare rowids
    const rare = terms.filter((_, i) => complete[i])
    // which common terms' seeks found all their meetings with the rare terms
    const sought = new Set<number>()
    if (rare.length > 0) {
      const rareMatch = `{text}: (${rare.map((t) => ftsPhrase(t.join(' '))).join(' OR ')})`
      // each seek walks the rare terms' postings again: at most SOUGHT common terms, the rarest (a pasted paragraph
      // has dozens; the others still count in the rescoring)
      const seek = new Set(terms.map((_, i) => i).filter((i) => !complete[i]).sort((x, y) => weights[y] - weights[x])
        .slice(0, SOUGHT))
      terms.forEach((t, i) => {
        if (!seek.has(i)) return
        check()
        const met = walk(`${rareMatch} AND {text}: ${ftsPhrase(t.join(' '))}`, SEEK_MEETINGS)
        if (met.length < SEEK_MEETINGS) sought.add(i)
        // both newest first: one walk
        let k = 0
        for (const rowid of met) {
          while (k < rowids.length && rowids[k] > rowid) k++
          if (rowids[k] === rowid) { weight[k] += weights[i]; held[k] |= bit(i) }
        }
      })
    }
    let among: number[] | undefined
    if (!none && innerTerms.some((i) => complete[i]) &&
      innerTerms.every((i) => i < 31 && (complete[i] || sought.has(i)))) {
      const need = innerTerms.reduce((m, i) => m | bit(i), 0)
      among = rowids.filter((_, k) => (held[k] & need) === need)
      none = among.length === 0
    }
    const coordination = new Map<number, number>()
    const heldBy = new Map<number, number>()
    if (rowids.length < rescore) {
      rowids.forEach((r, k) => { coordination.set(r, weight[k]); heldBy.set(r, held[k]) })
      // every term is common (or the rare ones are few): the newest passages holding all of the EVERY_TERMS
      // rarest first (ANDing a pasted paragraph's 32 common words walks one of them whole, seeking the others), then
      // the newest postings of the common terms, by the IDF of the terms they hold
      const every = `${readersPart}{text}: (${strongest.map((i) => ftsPhrase(terms[i].join(' '))).join(' AND ')})`
      // (a term already counted where it met a rare one is not counted again)
      const add = (rowid: number, i: number) => {
        const held = heldBy.get(rowid) ?? 0
        if (held & bit(i)) return
        coordination.set(rowid, (coordination.get(rowid) ?? 0) + weights[i])
        heldBy.set(rowid, held | bit(i))
      }
      // (a rare term's weight is there already: its postings are all among the candidates)
      const holdingAll = new Set(walk(every, rescore * widen))
      for (const rowid of holdingAll) for (const i of strongest) if (!complete[i]) add(rowid, i)
      postings.forEach((p, i) => {
        if (complete[i]) return
        const counted = strongest.includes(i)
        for (const rowid of p) if (!(counted && holdingAll.has(rowid))) add(rowid, i)
      })
    }
    let best: number[]
    const most = Math.max(rescore, cap)
    const candidates = postFilter ? most * widen : ranges ? 2 * most : most
    if (coordination.size > 0) {
      const keys = [...coordination.keys()]
      best = topEntries(keys, [...coordination.values()], candidates).map((k) => keys[k])
    } else {
      best = topEntries(rowids, weight, candidates).map((k) => { heldBy.set(rowids[k], held[k]); return rowids[k] })
    }
    check()
    if (postFilter || ranges) {
      // (a document's rowid range may hold passages of documents written between its slices: docSpan splits it)
      const kept = span ?? filterSpan(reader, filters)
      best = passingFilter(reader, filters, kept, best, most)
      if (postFilter && best.length < cap) {
        // too few kept (a filter of old documents, where the common words' newest postings do not reach): the
        // filter's newest passages holding any of the strongest words, walked inside its newest ranges, then
        // their newest postings anywhere, each a bounded read
        const known = new Set(best)
        const match = `${readersPart}{text}: (${strongest.map((i) => ftsPhrase(terms[i].join(' '))).join(' OR ')})`
        const add = (rowids: number[]) => {
          for (const rowid of passingFilter(reader, filters, kept, rowids.filter((r) => !known.has(r)),
            most - best.length)) {
            known.add(rowid)
            best.push(rowid)
          }
        }
        if (kept.ranges) add(walkIn(kept.ranges.slice(0, FALLBACK_RANGES), match, 2 * most))
        if (best.length < cap) add(postingsOf.all(match, FALLBACK_POSTINGS) as number[])
      }
    }
    const rows = store.prepared(byRowids(filters)).all({ ...readableParams(reader, filters),
      rowids: JSON.stringify(best) }) as HitRow[]
    const stems = terms.map((t) => t.map(roughStem))
    const scored = rows.map((row) => {
      // fold (NFKD) only what needs it: lower case is the whole fold of ASCII text
      const text = isAscii(row.text) ? row.text.toLowerCase() : fold(row.text)
      const length = wordCount(text)
      const mask = heldBy.get(row.rowid) ?? 0
      const norm = K1 * (1 - B + (B * length) / corpus.avgWords)
      let score = 0
      stems.forEach((stem, i) => {
        const f = Math.max(termFrequency(text, stem), mask & bit(i) ? 1 : 0)
        if (f > 0) score += (weights[i] * f * (K1 + 1)) / (f + norm)
      })
      return { row, score, snippet: () => wordsSnippet(row.text, terms) }
    })
    return { plan, hits: scored.sort((a, b) => b.score - a.score || b.row.rowid - a.row.rowid).slice(0, cap),
      evidence: { none, among } }
  }

  return words
}
