/**
 * The passage splitter (docs/api/knowledge.md#uploading), a pure function.
 *
 * - every passage has at most `chunkSize` characters (JavaScript string length);
 * - a boundary may move back to whitespace within the last fifth of the window: to just before a heading line
 *   if there is one there, else after the last whitespace;
 * - passage i+1 starts with the last `chunkOverlap` characters of passage i, except where that start would
 *   split a surrogate pair: there it starts one character earlier (the overlap grows by one);
 * - no boundary splits a surrogate pair; each passage starts after the previous one starts;
 * - together the passages cover the whole text.
 */
export interface ChunkOptions {
  chunkSize: number
  chunkOverlap: number
}

export const CHUNK_LIMITS = { minSize: 50, maxSize: 20_000 } as const

export interface Passage {
  start: number
  end: number
}

export function chunkOptionsProblem({ chunkSize, chunkOverlap }: ChunkOptions): string | undefined {
  if (!Number.isInteger(chunkSize) || chunkSize < CHUNK_LIMITS.minSize || chunkSize > CHUNK_LIMITS.maxSize) {
    return `chunkSize must be an integer from ${CHUNK_LIMITS.minSize} to ${CHUNK_LIMITS.maxSize}`
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    return 'chunkOverlap must be an integer from 0 to chunkSize - 1'
  }
  return undefined
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
const WHITESPACE = /\s/

/** True when a boundary at `i` would separate the two halves of a surrogate pair. */
function splitsPair(text: string, i: number): boolean {
  return i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) && isLow(text.charCodeAt(i))
}

/**
 * Where a passage ending in [lowest, end] ends: before a heading line (the Markdown headings the extractors
 * write) if there is one, else after the last whitespace, else at `end`. Reads no character past `end`: a
 * passage depends only on the `chunkSize + 1` characters from its start (the background indexer computes
 * passages a window of the text at a time).
 */
function boundary(text: string, lowest: number, end: number): number {
  let space = 0
  for (let j = end; j >= lowest; j--) {
    const before = text[j - 1]
    if (before === '\n' && text[j] === '#') return j
    if (!space && WHITESPACE.test(before)) space = j
  }
  return space || end
}

/**
 * The passages of `text` as [start, end) offsets, computed lazily so that a caller can index a
 * large text in batches without holding every passage at once.
 */
export function* passageRanges(text: string, { chunkSize, chunkOverlap }: ChunkOptions): Generator<Passage> {
  const problem = chunkOptionsProblem({ chunkSize, chunkOverlap })
  if (problem) throw new RangeError(problem)
  const n = text.length
  if (n === 0) return
  const slack = Math.floor(chunkSize / 5)
  let start = 0
  for (;;) {
    let end = Math.min(start + chunkSize, n)
    if (end < n) {
      // the next passage must still start after this one: end - overlap > start
      end = boundary(text, Math.max(end - slack, start + chunkOverlap + 1), end)
      if (splitsPair(text, end)) end -= 1
    }
    yield { start, end }
    if (end >= n) return
    let next = end - chunkOverlap
    if (splitsPair(text, next)) next -= 1
    if (next <= start) {
      // only reachable with an overlap of nearly the whole window around a surrogate pair
      next = start + 1
      if (splitsPair(text, next)) next += 1
    }
    start = next
  }
}

export function chunkText(text: string, options: ChunkOptions): string[] {
  return Array.from(passageRanges(text, options), (p) => text.slice(p.start, p.end))
}

/** The number of passages, without building them. */
export function countPassages(text: string, options: ChunkOptions): number {
  let count = 0
  for (const _ of passageRanges(text, options)) count++
  return count
}
