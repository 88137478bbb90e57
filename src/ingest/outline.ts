/**
 * Where a passage is in its document: the document's title and the path of headings above a passage
 * ("Server Configuration › Resource Consumption › Memory"). Headings are the Markdown headings of the text —
 * `#` lines and underlined (setext) ones outside fenced code — which the extractors write for the headings of
 * HTML, DOCX and PDF files (docs/api/knowledge.md, "Extracted text"). Offsets are JavaScript string indices,
 * as the chunker's passage ranges are.
 */
import type { Passage } from './chunker.js'

export interface Heading {
  /** where the heading's line starts */
  start: number
  /** 1–6 */
  level: number
  text: string
  /** the index of the nearest heading before it with a lower level, -1 when none */
  parent: number
}

export interface Outline {
  /** in the order of the text */
  headings: readonly Heading[]
  /** the text starts with a heading (nothing but blank lines before it): the document's title */
  titled: boolean
}

/**
 * File types whose text may carry headings: Markdown and plain text as written, and the types whose text the
 * extractors write. In source code and configuration files a `#` line is a comment.
 */
const OUTLINED = new Set(['md', 'markdown', 'txt', 'html', 'htm', 'pdf', 'docx'])
export const hasOutline = (fileType: string) => OUTLINED.has(fileType.toLowerCase())

/** the longest heading text kept: a "heading" longer than this is a paragraph that happens to start with # */
const MAX_HEADING_CHARS = 300
/**
 * the most headings an outline keeps (at 300 characters each, about 35 MB): a 50 MB text of nothing but `#` lines
 * would otherwise hold millions, past the index worker's heap; after the last one kept, passages take its path
 */
export const MAX_HEADINGS = 50_000

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const SETEXT = /^ {0,3}(={3,}|-{3,})[ \t]*$/
const FENCE = /^ {0,3}(`{3,}|~{3,})/

/**
 * Reads the headings of a text given in pieces (a large text is read from its file a piece at a time):
 * `push` each piece in order, then `end`.
 */
export class OutlineReader {
  private readonly headings: Heading[] = []
  /** where the first line of text that is not a `#` heading starts */
  private firstText: number | undefined
  /** the open headings, innermost last: the parents of the next heading */
  private readonly open: number[] = []
  private carry = ''
  private carryStart = 0
  private offset = 0
  private fence: { char: string; length: number } | undefined
  /** the previous line, when it could be the text of an underlined heading */
  private previous: { start: number; text: string } | undefined

  push(piece: string): void {
    const text = this.carry + piece
    let lineStart = 0
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', lineStart)) {
      this.line(text.slice(lineStart, nl), this.carryStart + lineStart)
      lineStart = nl + 1
    }
    this.offset += piece.length
    this.carry = text.slice(lineStart)
    this.carryStart = this.offset - this.carry.length
  }

  end(): Outline {
    if (this.carry) this.line(this.carry, this.carryStart)
    this.carry = ''
    const first = this.headings[0]
    return { headings: this.headings, titled: first !== undefined && (this.firstText ?? Infinity) >= first.start }
  }

  private line(raw: string, start: number): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (this.firstText === undefined && line.trim() && !ATX.test(line)) this.firstText = start
    const fence = FENCE.exec(line)
    if (this.fence) {
      if (fence && fence[1][0] === this.fence.char && fence[1].length >= this.fence.length &&
        line.trim() === fence[1]) this.fence = undefined
      this.previous = undefined
      return
    }
    if (fence) {
      this.fence = { char: fence[1][0], length: fence[1].length }
      this.previous = undefined
      return
    }
    const atx = ATX.exec(line)
    if (atx) {
      this.add(start, atx[1].length, atx[2] ?? '')
      this.previous = undefined
      return
    }
    const underline = SETEXT.exec(line)
    if (underline && this.previous) {
      this.add(this.previous.start, underline[1][0] === '=' ? 1 : 2, this.previous.text)
      this.previous = undefined
      return
    }
    // a line that could be underlined: text, not a list item, a quote or a table row
    this.previous = line.trim() && !/^\s*([-*+>|]|\d+[.)])\s/.test(line) ? { start, text: line } : undefined
  }

  private add(start: number, level: number, raw: string): void {
    const text = raw.replace(/\s+/g, ' ').trim()
    if (!text || text.length > MAX_HEADING_CHARS || this.headings.length >= MAX_HEADINGS) return
    while (this.open.length > 0 && this.headings[this.open[this.open.length - 1]].level >= level) this.open.pop()
    this.headings.push({ start, level, text, parent: this.open.length > 0 ? this.open[this.open.length - 1] : -1 })
    this.open.push(this.headings.length - 1)
  }
}

export function documentOutline(text: string): Outline {
  const reader = new OutlineReader()
  reader.push(text)
  return reader.end()
}

/** The index of the last heading that starts at or before `offset`, -1 when none. */
function headingAt(outline: readonly Heading[], offset: number): number {
  let lo = 0
  let hi = outline.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (outline[mid].start <= offset) { found = mid; lo = mid + 1 } else hi = mid - 1
  }
  return found
}

/** The headings from the outermost down to heading `index` (none for -1). */
export function headingPath({ headings }: Outline, index: number): string[] {
  const path: string[] = []
  for (let i = index; i >= 0; i = headings[i].parent) path.unshift(headings[i].text)
  return path
}

/**
 * The heading path of a passage: that of the section holding most of the passage's characters (a passage
 * that starts with the end of one section and goes on into the next belongs to the next).
 */
export function passageHeadingPath(outline: Outline, passage: Passage): string[] {
  const { headings } = outline
  let best = headingAt(headings, passage.start)
  let bestLength = -1
  for (let i = best; i < headings.length && (i < 0 || headings[i].start < passage.end); i++) {
    const from = i < 0 ? passage.start : Math.max(headings[i].start, passage.start)
    const to = i + 1 < headings.length ? Math.min(headings[i + 1].start, passage.end) : passage.end
    if (to - from > bestLength) { best = i; bestLength = to - from }
  }
  return headingPath(outline, best)
}

/**
 * The title of a document: its first heading when the text starts with it (as the extractors write a page's,
 * a DOCX's or a PDF's title), else its file name without the extension.
 */
export function documentTitle(outline: Outline, fileName: string): string {
  return outline.titled ? outline.headings[0].text : fileTitle(fileName)
}

/** The title of a document whose text gives none: its file name without the extension. */
export function fileTitle(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(0, dot) : base
}

/** A heading path as stored (knowledge_passages.heading_path): a JSON array, NULL when empty. */
export const storedHeadingPath = (path: readonly string[]): string | null =>
  path.length > 0 ? JSON.stringify(path) : null

/** A stored heading path read back. */
export const readHeadingPath = (stored: string | null | undefined): string[] =>
  stored ? JSON.parse(stored) as string[] : []

/** a line that starts with a short phrase (up to 8 words) and a colon, or a cell and ` | `; longer, a sentence */
const TERM_LINE = /^([^\s:|#>`*-][^:|\n]{0,79}?):(?:[ \t]+\S|[ \t]*$)/
const MAX_TERM_WORDS = 8
const ROW_LINE = /^([^\s|#>`*-][^|\n]{0,79}?) \| \S/

/**
 * The terms a passage defines, in the shapes the extractors write them: its headings, the terms of
 * definition lists ("term: definition") and the first cell of table rows ("name | …"), outside fenced code.
 * For ranking, a passage that defines a query's key word says more than one that mentions it.
 */
export function definedTerms(passage: string): string[] {
  const terms: string[] = []
  let fence: string | undefined
  for (const raw of passage.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const marker = FENCE.exec(line)?.[1]
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
      continue
    }
    if (marker) { fence = marker; continue }
    const heading = ATX.exec(line)
    const term = heading ? heading[2] : [TERM_LINE.exec(line)?.[1], ROW_LINE.exec(line)?.[1]]
      .find((t) => t !== undefined && t.trim().split(/\s+/).length <= MAX_TERM_WORDS)
    const text = term?.replace(/\s+/g, ' ').trim()
    if (text && !terms.includes(text)) terms.push(text)
  }
  return terms
}
