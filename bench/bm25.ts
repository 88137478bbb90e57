import MiniSearch from 'minisearch'

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[]
const processTerm = MiniSearch.getDefault('processTerm') as (term: string) => string | null | undefined

/** MiniSearch's default terms of a text: split at spaces and punctuation, lower case, empty ones dropped. */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const token of tokenize(text)) {
    const term = processTerm(token)
    if (term) out.push(term)
  }
  return out
}

/**
 * Okapi BM25 over every document that holds a query term (no candidate bound), with MiniSearch's default
 * tokenisation: score(d) = Σ over the query's distinct terms t of
 * idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl)), |d| the document's number of terms,
 * idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)) (never negative).
 * MiniSearch differs in three ways: b 0.7, a BM25+ floor d 0.5 added for every matching term, and |d| counted in
 * distinct terms.
 */
export class Bm25 {
  private readonly postings = new Map<string, { docs: number[]; tf: number[] }>()
  private readonly lengths: Float64Array
  private readonly avg: number

  constructor(texts: string[], private readonly k1 = 1.2, private readonly b = 0.75) {
    this.lengths = new Float64Array(texts.length)
    let total = 0
    texts.forEach((text, doc) => {
      const counts = new Map<string, number>()
      const words = terms(text)
      for (const t of words) counts.set(t, (counts.get(t) ?? 0) + 1)
      for (const [t, tf] of counts) {
        let p = this.postings.get(t)
        if (!p) this.postings.set(t, p = { docs: [], tf: [] })
        p.docs.push(doc)
        p.tf.push(tf)
      }
      this.lengths[doc] = words.length
      total += words.length
    })
    this.avg = total / Math.max(texts.length, 1)
  }

  /** The indexes of the best `k` documents for `query`, best first (equal scores: the earlier document first). */
  top(query: string, k: number): number[] {
    const n = this.lengths.length
    const scores = new Map<number, number>()
    for (const t of new Set(terms(query))) {
      const p = this.postings.get(t)
      if (!p) continue
      const idf = Math.log(1 + (n - p.docs.length + 0.5) / (p.docs.length + 0.5))
      p.docs.forEach((doc, i) => {
        const tf = p.tf[i]
        const norm = this.k1 * (1 - this.b + (this.b * this.lengths[doc]) / this.avg)
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (this.k1 + 1)) / (tf + norm))
      })
    }
    return [...scores].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k).map(([doc]) => doc)
  }
}
