/**
 * A PDF page's text from the runs pdf.js reports, in their order in the content stream (the order word
 * processors and typesetters write: a column, then the next), placed by their positions: runs on one baseline
 * make a line, a wide gap between two runs of a line separates table cells (` | `), a narrow one is a space,
 * a tall gap between lines is a paragraph break, and lines set larger than the document's body text are its
 * headings (`#`, `##`, `###` by size).
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

export function pageLines(runs: Iterable<TextRun>): PageLine[] {
  const lines: PageLine[] = []
  let text = ''
  let size = 0
  let y = 0
  let end = 0
  let start = 0
  let open = false
  let pendingBreak = false
  let spaced = false
  const finish = () => {
    const line = text.trim()
    if (line) lines.push({ text: line, size, break: pendingBreak || lines.length === 0 })
    text = ''
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
        if (gap > CELL_GAP * runSize) text = text.trimEnd() + ' | '
        else if ((gap > SPACE_GAP * runSize || spaced) && !ends(text) && !/^\s/.test(run.text)) text += ' '
        text += run.text
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
    text = run.text
    size = runSize
    y = run.y
    end = runEnd
    start = run.x
    spaced = false
  }
  if (open) finish()
  return lines
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
