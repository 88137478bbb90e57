/**
 * The words path: `words-exact` (every match of the reader's ranked by BM25) and `words-bounded` (each term's
 * postings read, the candidates where the rare terms are, the best ranked by BM25), planned by planner.ts planWords
 * from the figures read here. Every figure counts the reader's passages only (reader-statistics.ts).
 */
import type Database from 'better-sqlite3'
import { readableParams, readableWhere, type DocFilters, type Reader } from './readers.js'
import { fold, ftsPhrase, innerWords, queryTerms, roughStem, wordsSnippet } from './query.js'
import type { KnowledgeStore } from './store.js'
import { DOC_COLUMNS, type HitRow } from './index-walk.js'
import { isAscii } from './fold.js'
import { lazy } from './lazy.js'
import { planWords, type WordsEvidence, type WordsPlan } from './planner.js'
import type { SearchSettings } from './search-settings.js'
import type { ReaderStatistics } from './reader-statistics.js'
import type { FilterSpans } from './filter-spans.js'
import { BudgetSpent, type Scored, type SearchBudget } from './hits.js'
import { B, diversify, fieldFrequency, intersects, inverseFrequency, K1, mergePostings, minimalSpan, namesTerm,
  nameStems, passageFields, termFrequency, topEntries, wordCount } from './word-ranking.js'
import { definedTerms, fileTitle, readHeadingPath } from '../ingest/outline.js'

/** fold (NFKD) only what needs it: lower case is the whole fold of ASCII text */
const foldText = (s: string) => isAscii(s) ? s.toLowerCase() : fold(s)

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
    everyTerms: EVERY_TERMS, fallbackRanges: FALLBACK_RANGES, seekMeetings: SEEK_MEETINGS, sought: SOUGHT,
    probe: PROBE, fields: FIELDS, proximity: PROXIMITY, idf: IDF, defines: DEFINES,
    diversity: DIVERSITY } = settings.words
  const { maxWidening: MAX_WIDENING, fallbackPostings: FALLBACK_POSTINGS } = settings.filters
  const { span: filterSpan, ranges: filteredRanges, passing: passingFilter } = spans
  const byRowids = (filters: DocFilters) => `
    SELECT p.rowid, p.id, p.text, p.chunk_index, p.heading_path, ${DOC_COLUMNS}
    FROM knowledge_passages p JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}`
  const postingsOf = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ?
    ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsBefore = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsWithin = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid`).pluck()
  /**
   * Word search at scale. A question's words match tens of thousands of passages at a million, so each term's
   * postings among the reader's passages are read (rowids only, newest first, at most POSTINGS_PER_TERM; a term
   * whose first `probe` postings already show it common stops there). When all of them together are few, every
   * match is ranked (words-exact). Otherwise the candidates are the passages holding the rare terms (those read
   * whole), ranked by the IDF of the terms they hold (the common ones sought at the rare rowids), and — when every
   * term is common — the passages holding all of them; the best `rescore` are ranked (words-bounded). Ranking is
   * BM25 in JavaScript over the reader's figures: term frequencies from the text, stemmed lightly (a posting counts
   * as at least one). FTS5's own bm25() is not used: it counts every organization's passages.
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
    const view = stats.view(reader, filters.scope)
    const filtered = !!(filters.category || filters.tags?.length)
    // a category or tag filter: the walks stay inside the filtered documents' rowid ranges
    const found = terms.length > 0 && view.readersMatch && filtered ? filteredRanges(reader, filters) : 'all'
    // (a filter leaving out no passage: the walks as without it)
    const ranges = found === 'all' || found === undefined ? undefined : found
    const readable = view.passages
    const share = Math.min(1, readable / Math.max(1, stats.indexSize()))
    const shared = share >= 0.5
    // a filter of too many documents or stretches to walk inside: the walks as without it, the best candidates kept
    // in ranked order as long as they pass it, `widen` times as many sought as without a filter
    const span = found === undefined ? filterSpan(reader, filters) : undefined
    const postFilter = span !== undefined
    const widen = span ? Math.max(1, Math.min(MAX_WIDENING, Math.ceil(readable / Math.max(span.passages, 1)))) : 1
    const matchOf = (t: string[]) => `{text}: ${ftsPhrase(t.join(' '))}`
    // a reader of at least half the index walks each match alone and keeps their own passages (ANDed with the readers
    // token, FTS5 reads that token's whole doclist at every walk); a smaller reader's walks are ANDed with it. Either
    // way the walks give the same rowids: the reader's
    // how many of the reader's passages hold a term (BM25's df): all of its postings when fewer than PROBE, else
    // estimated from how far back its newest PROBE postings reach among the reader's passages (terms spread evenly)
    const dfOf = (t: string[], newest?: number[]) => view.passagesWith(t, () => {
      const p = newest ?? walkIn(undefined, matchOf(t), PROBE)
      return p.length < PROBE ? p.length
        : Math.min(readable, p.length * readable / Math.max(1, view.newerThan(p[p.length - 1])))
    })
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
        // the newest postings in chunks, the reader's kept: a reader of half the index or more walks the match alone
        // (enough at their share of the index, and a little more: one statement, mostly); a smaller one walks it
        // ANDed with their readers tokens, which still hold a deleted document's passages until they are purged
        const mine = shared ? match : `${view.readersMatch} AND ${match}`
        const out: number[] = []
        for (let below = before; ;) {
          const chunk = shared ? Math.ceil((most - out.length) / share * 1.05) + 16 : most - out.length
          const got = (below === undefined ? postingsOf.all(mine, chunk) : postingsBefore.all(mine, below, chunk)) as
            number[]
          for (let k = 0; k < got.length && out.length < most; k++) if (view.holds(got[k])) out.push(got[k])
          if (out.length >= most || got.length < chunk) return out
          below = got[got.length - 1]
          check()
        }
      }
      // (a filter's ranges are runs of the reader's own passages: doc-runs.ts)
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
        // (the filtered ranges' postings say nothing of a term's frequency among all the reader's passages)
        if (complete[i] || (!ranges && dfOf(t, first.length === PROBE ? first : undefined) > commonMargin * perTerm)) {
          return first
        }
        const p = first.concat(walk(matchOf(t), perTerm + 1 - first.length, first[first.length - 1]))
        complete[i] = p.length <= perTerm
        return p
      })
      return { postings, complete }
    })
    const plan = planWords({
      terms: terms.length,
      readsNothing: !view.readersMatch,
      filter: () => found === undefined ? 'post-filter' : found === 'all' ? (filtered ? 'all' : 'none')
        : found.length === 0 ? 'empty' : 'ranges',
      postings: () => read().postings.reduce((n, p, i) => n + (read().complete[i] ? p.length : EXACT_POSTINGS + 1),
        0)
    }, settings)
    if (plan.kind === 'nothing') return { plan, hits: [], evidence: { none: found !== undefined && found !== 'all' } }
    const { postings, complete } = read()
    // a passage holding the whole query holds each of its inner words as a word, so it is in each such term's
    // postings: the rare ones' lists must meet (and below, hold the common inner terms where they meet)
    const inner = new Set(evidenceWanted ? innerWords(query).words : [])
    const innerTerms = terms.map((_, i) => i).filter((i) => terms[i].length === 1 && inner.has(terms[i][0]))
    let none = innerTerms.some((i) => complete[i]) &&
      !intersects(innerTerms.filter((i) => complete[i]).map((i) => postings[i]))
    const idf = (df: number) => inverseFrequency(IDF, Math.max(readable, df), df)
    // (inside a filter's ranges, a term's postings say how often it is there, not among all the reader's passages:
    // a common term met in a few sparse ranges would look rare)
    const dfs = postings.map((p, i) => (ranges || !complete[i] ? dfOf(terms[i]) : p.length))
    const weights = dfs.map(idf)
    // the EVERY_TERMS rarest words: what passages holding every word are sought by, and the filter's fallback
    const strongest = terms.map((_, i) => i).sort((x, y) => weights[y] - weights[x]).slice(0, EVERY_TERMS)
    const strongestPhrases = strongest.map((i) => ftsPhrase(terms[i].join(' ')))
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
    if (plan.kind === 'words-bounded' && rowids.length < rescore) {
      rowids.forEach((r, k) => { coordination.set(r, weight[k]); heldBy.set(r, held[k]) })
      // every term is common (or the rare ones are few): the newest passages holding all of the EVERY_TERMS
      // rarest first (ANDing a pasted paragraph's 32 common words walks one of them whole, seeking the others), then
      // the newest postings of the common terms, by the IDF of the terms they hold
      const every = `{text}: (${strongestPhrases.join(' AND ')})`
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
    if (plan.kind === 'words-exact') {
      // every match of the reader's, ranked (a filter is applied where they are read)
      best = rowids
      rowids.forEach((r, k) => heldBy.set(r, held[k]))
    } else if (coordination.size > 0) {
      const keys = [...coordination.keys()]
      best = topEntries(keys, [...coordination.values()], candidates).map((k) => keys[k])
    } else {
      best = topEntries(rowids, weight, candidates).map((k) => { heldBy.set(rowids[k], held[k]); return rowids[k] })
    }
    check()
    if (plan.kind === 'words-bounded' && (postFilter || ranges)) {
      // (a document's rowid range may hold passages of documents written between its slices: doc-runs.ts splits it)
      const kept = span ?? filterSpan(reader, filters)
      best = passingFilter(reader, filters, kept, best, most)
      if (postFilter && best.length < cap) {
        // too few kept (a filter of old documents, where the common words' newest postings do not reach): the
        // filter's newest passages holding any of the strongest words, walked inside its newest ranges, then
        // their newest postings anywhere, each a bounded read
        const known = new Set(best)
        const match = `{text}: (${strongestPhrases.join(' OR ')})`
        const add = (rowids: number[]) => {
          for (const rowid of passingFilter(reader, filters, kept, rowids.filter((r) => !known.has(r)),
            most - best.length)) {
            known.add(rowid)
            best.push(rowid)
          }
        }
        if (kept.ranges) add(walkIn(kept.ranges.slice(0, FALLBACK_RANGES), match, 2 * most))
        if (best.length < cap) add(walkIn(undefined, match, FALLBACK_POSTINGS))
      }
    }
    const rows = store.prepared(byRowids(filters)).all({ ...readableParams(reader, filters),
      rowids: JSON.stringify(best) }) as Array<HitRow & { heading_path: string | null }>
    const stems = terms.map((t) => t.map(roughStem))
    const avgWords = view.avgWords()
    const scored = rows.map((row) => {
      const text = foldText(row.text)
      const length = wordCount(text)
      const mask = heldBy.get(row.rowid) ?? 0
      const norm = K1 * (1 - B + (B * length) / avgWords)
      // the passage's headings, its document's title and the terms it defines, as weighted fields
      const fields = passageFields(readHeadingPath(row.heading_path), row.title ?? fileTitle(row.file_name),
        FIELDS.defined ? definedTerms(row.text) : [], foldText)
      let score = 0
      const inText: number[] = []
      stems.forEach((stem, i) => {
        const tf = termFrequency(text, stem)
        if (tf > 0) inText.push(i)
        const f = Math.max(tf, mask & bit(i) ? 1 : 0) + fieldFrequency(fields, stem, FIELDS)
        if (f > 0) score += (weights[i] * f * (K1 + 1)) / (f + norm)
      })
      // the passage names the query's key word (its rarest term) in its section heading or a term it defines
      if (DEFINES > 0 && strongest.length > 0) {
        const key = strongest[0]
        const path = readHeadingPath(row.heading_path)
        const names = path.length > 0 ? [path[path.length - 1], ...definedTerms(row.text)] : definedTerms(row.text)
        if (names.some((n) => namesTerm(nameStems(n, foldText), stems[key]))) score += DEFINES * weights[key]
      }
      // term proximity: the words the text holds, close together, add up to PROXIMITY × their IDF (all of it when
      // they are neighbours, less as the fewest words holding them all grow)
      if (PROXIMITY > 0 && inText.length > 1) {
        const span = minimalSpan(text, stems, inText)
        if (span < Infinity) score += PROXIMITY * inText.reduce((n, i) => n + weights[i], 0) * inText.length / span
      }
      return { row, score, snippet: () => wordsSnippet(row.text, terms) }
    })
    scored.sort((a, b) => b.score - a.score || b.row.rowid - a.row.rowid)
    return { plan, hits: diversify(scored, cap, DIVERSITY.after, DIVERSITY.factor, (s) => s.row.doc_id),
      evidence: { none, among } }
  }

  return words
}
