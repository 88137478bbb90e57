/**
 * A PDF page's text from the runs pdf.js reports, in their order in the content stream (the order word
 * processors and typesetters write: a column, then the next), placed by their positions: runs on one baseline
 * make a line, a wide gap between two runs of a line separates table cells (` | `), a narrow one is a space,
 * a tall gap between lines is a paragraph break, two columns written a line at a time across the page are read
 * one after the other, and lines set larger than the document's body text are its headings (`#`, `##`, `###`
 * by size).
 */

/** One run of text in page units: the start of its baseline, its advance width and its font size. */
export interface TextRun { text: string; x: number; y: number; width: number; size: number }

/** A line of a page; `break`: a paragraph break (or a jump to another column) comes before it. */
export interface PageLine { text: string; size: number; break: boolean }

/** a gap between runs of a line wider than this many font sizes separates table cells or tab stops */
const CELL_GAP = 1.5
/** a gap narrower than this (in font sizes) is a kerning gap inside a word, not a space */
const SPACE_GAP = 0.12
/** lines further apart than this many font sizes are separate paragraphs */
const PARAGRAPH_GAP = 1.9
/** a line set this much larger than the body text is a heading, if short */
const HEADING_SCALE = 1.2
const HEADING_MAX_CHARS = 150

const ends = (s: string) => /\s$/.test(s)

/** A line as read: its cells (runs apart by wide gaps) with where each starts and ends. */
interface RawLine { cells: { x: number; end: number; text: string }[]; size: number; break: boolean }

export function pageLines(runs: Iterable<TextRun>): PageLine[] {
  const lines: RawLine[] = []
  let cells: RawLine['cells'] = []
  let size = 0
  let y = 0
  let end = 0
  let start = 0
  let open = false
  let pendingBreak = false
  let spaced = false
  const finish = () => {
    const kept = cells.map((c) => ({ ...c, text: c.text.trim() })).filter((c) => c.text !== '')
    if (kept.length > 0) lines.push({ cells: kept, size, break: pendingBreak || lines.length === 0 })
    cells = []
  }
  for (const run of runs) {
    if (!run.text.trim()) {
      // a run of spaces: a space in the line, if one follows
      spaced = true
      continue
    }
    const runSize = run.size > 0 ? run.size : 1
    const runEnd = run.x + run.width
    if (open) {
      const tolerance = 0.5 * Math.min(runSize, size)
      if (Math.abs(run.y - y) <= tolerance) {
        // right of the last run (left of it in right-to-left text)
        const gap = run.x >= end - tolerance ? run.x - end : start - runEnd
        const cell = cells[cells.length - 1]
        if (gap > CELL_GAP * runSize) {
          cells.push({ x: run.x, end: runEnd, text: run.text })
        } else {
          if ((gap > SPACE_GAP * runSize || spaced) && !ends(cell.text) && !/^\s/.test(run.text)) cell.text += ' '
          cell.text += run.text
          cell.end = Math.max(cell.end, runEnd)
        }
        size = Math.max(size, runSize)
        end = Math.max(end, runEnd)
        start = Math.min(start, run.x)
        spaced = false
        continue
      }
      const drop = y - run.y
      finish()
      pendingBreak = drop > PARAGRAPH_GAP * Math.max(runSize, size) || drop < -tolerance
    }
    open = true
    cells = [{ x: run.x, end: runEnd, text: run.text }]
    size = runSize
    y = run.y
    end = runEnd
    start = run.x
    spaced = false
  }
  if (open) finish()
  return columnsApart(lines).map((l) => ({ text: l.cells.map((c) => c.text).join(' | '), size: l.size,
    break: l.break }))
}

/** two columns of prose written line by line across the page: at least this many lines in a row, ... */
const COLUMN_MIN_LINES = 3
/** ... and this many characters on each side, on average (table cells are shorter) */
const COLUMN_MIN_CHARS = 25

/**
 * Text set in two columns but written a line at a time across both reads as lines of two long cells split at
 * the same place: such a run of lines is read as the left column, then the right one.
 */
function columnsApart(lines: RawLine[]): RawLine[] {
  const out: RawLine[] = []
  for (let i = 0; i < lines.length;) {
    const first = lines[i]
    if (first.cells.length !== 2) { out.push(lines[i++]); continue }
    const gutter = first.cells[1].x
    const near = (x: number, line: RawLine) => Math.abs(x - gutter) <= line.size
    const left: RawLine[] = []
    const right: RawLine[] = []
    let pairs = 0
    let j = i
    for (; j < lines.length; j++) {
      const line = lines[j]
      const [a, b] = line.cells
      if (line.cells.length === 2 && a.end < gutter && near(b.x, line)) {
        left.push({ ...line, cells: [a] })
        right.push({ ...line, cells: [b], break: line.break && right.length > 0 })
        pairs++
      } else if (line.cells.length === 1 && near(a.x, line)) {
        right.push({ ...line, break: line.break && right.length > 0 })
      } else if (line.cells.length === 1 && a.end < gutter && j > i) {
        left.push(line)
      } else break
    }
    const average = (side: RawLine[]) => side.reduce((n, l) => n + l.cells[0].text.length, 0) / side.length
    if (pairs >= COLUMN_MIN_LINES && average(left) >= COLUMN_MIN_CHARS && average(right) >= COLUMN_MIN_CHARS) {
      out.push(...left, { ...right[0], break: true }, ...right.slice(1))
      i = j
    } else {
      out.push(lines[i++])
    }
  }
  return out
}

/** the key under which sizes count as one (a size may differ by rounding from line to line) */
const sizeKey = (size: number) => Math.round(size * 2) / 2

/** The text of a document from its pages' lines: pages apart by a blank line, headings marked by size. */
export function documentText(pages: PageLine[][]): string {
  const chars = new Map<number, number>()
  for (const page of pages) {
    for (const line of page) chars.set(sizeKey(line.size), (chars.get(sizeKey(line.size)) ?? 0) + line.text.length)
  }
  let body = 0
  let most = -1
  for (const [size, count] of chars) if (count > most) { body = size; most = count }
  const isHeading = (line: PageLine) => sizeKey(line.size) >= body * HEADING_SCALE &&
    line.text.length <= HEADING_MAX_CHARS && /\p{L}/u.test(line.text) && !line.text.includes(' | ')
  // the three largest heading sizes are levels 1, 2 and 3; any smaller heading size is level 3
  const headingSizes = [...new Set(pages.flat().filter(isHeading).map((l) => sizeKey(l.size)))].sort((a, b) => b - a)
  const level = (line: PageLine) => Math.min(3, headingSizes.indexOf(sizeKey(line.size)) + 1)

  return pages.map((page) => {
    // paragraphs and headings, each a block of lines
    const blocks: string[] = []
    let heading: { level: number; text: string } | undefined
    let paragraph = false
    for (const line of page) {
      if (isHeading(line)) {
        // a heading set over two lines is one heading
        if (heading && heading.level === level(line) && !line.break) {
          heading.text += ` ${line.text}`
          blocks[blocks.length - 1] = `${'#'.repeat(heading.level)} ${heading.text}`
        } else {
          heading = { level: level(line), text: line.text }
          blocks.push(`${'#'.repeat(heading.level)} ${heading.text}`)
        }
        paragraph = false
        continue
      }
      heading = undefined
      if (paragraph && !line.break) blocks[blocks.length - 1] += `\n${line.text}`
      else blocks.push(line.text)
      paragraph = true
    }
    return blocks.join('\n\n')
  }).filter((text) => text !== '').join('\n\n')
}
