/**
 * Comments on a text selection: where a quote sits in a field of an artifact's content (its Markdown source), and
 * where it sits on a later version whose text changed. Pure functions, no DOM.
 */

/** A `{kind: "text"}` comment position (character offsets into the field's source). */
export interface TextPosition { kind: 'text'; field: string; quote: string; start?: number; end?: number }

/** The string at a dotted path of the content (`summary`, `steps.1.detail`), or undefined. */
export function fieldText(content: unknown, field: string): string | undefined {
  let at: unknown = content
  for (const part of field.split('.')) {
    if (at === null || typeof at !== 'object') return undefined
    at = Array.isArray(at) ? (/^\d+$/.test(part) ? at[Number(part)] : undefined) : (at as Record<string, unknown>)[part]
  }
  return typeof at === 'string' ? at : undefined
}

export function isTextPosition(position: unknown): position is TextPosition {
  if (!position || typeof position !== 'object') return false
  const p = position as Record<string, unknown>
  return p.kind === 'text' && typeof p.field === 'string' && p.field !== '' && typeof p.quote === 'string' &&
    p.quote !== ''
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** Markdown's marks that rendering removes, which may stand between the words a person selected. */
const MARKUP = '[\\s*_`~#>+\\-]'

/** Every place of `quote` in `source`: as written, else word by word across Markdown marks and line breaks. */
function occurrences(source: string, quote: string): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = []
  for (let i = source.indexOf(quote); i >= 0 && quote; i = source.indexOf(quote, i + 1)) {
    found.push({ start: i, end: i + quote.length })
  }
  if (found.length > 0) return found
  const words = quote.trim().split(/\s+/).filter(Boolean)
  if (words.length === 0) return found
  const pattern = new RegExp(words.map(escape).join(`${MARKUP}+`), 'g')
  for (const m of source.matchAll(pattern)) found.push({ start: m.index, end: m.index + m[0].length })
  return found
}

/**
 * The position of a selection: the quote is the text as the person saw it selected (whitespace collapsed); `start`
 * and `end` its place in the field's source, the occurrence nearest to where the selection starts in the shown
 * text. Offsets are left out when the selection cannot be found in the source (it crossed a link's address, say):
 * the quote alone then anchors it.
 */
export function locateQuote(source: string, field: string, selected: string, shownStart: number): TextPosition {
  const quote = selected.replace(/\s+/g, ' ').trim()
  const candidates = occurrences(source, quote)
  if (candidates.length === 0) return { kind: 'text', field, quote }
  // Markdown marks only add characters, so the source offset is at or after the shown one
  const best = candidates.reduce((a, b) => Math.abs(b.start - shownStart) < Math.abs(a.start - shownStart) ? b : a)
  return { kind: 'text', field, quote, start: best.start, end: best.end }
}

/** Where a text comment is now: at its offsets (`exact`), found again by its quote (`moved`), or gone (`changed`). */
export type Placement = { state: 'exact' | 'moved'; start: number; end: number } | { state: 'changed' }

export function placeQuote(source: string | undefined, position: TextPosition): Placement {
  if (source === undefined) return { state: 'changed' }
  const { start, end, quote } = position
  if (typeof start === 'number' && typeof end === 'number' && end > start &&
    matchKey(source.slice(start, end)) === matchKey(quote)) {
    return { state: 'exact', start, end }
  }
  const candidates = occurrences(source, quote)
  if (candidates.length === 0) return { state: 'changed' }
  const near = typeof start === 'number' ? start : 0
  const best = candidates.reduce((a, b) => Math.abs(b.start - near) < Math.abs(a.start - near) ? b : a)
  return { state: 'moved', ...best }
}

/**
 * The text a page shows for a piece of Markdown source, reduced for matching: whitespace and Markdown marks
 * removed. Used on both sides, so the quote can be found in what the browser rendered.
 */
export function matchKey(text: string): string {
  return text.replace(/[\s*_`~#>]/g, '')
}
