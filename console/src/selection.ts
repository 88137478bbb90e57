import { fieldText, locateQuote, matchKey, type TextPosition } from './text-anchor.js'

/**
 * The page's side of comments on a selection: the selection read as a position in a field of the content (each
 * text field is rendered inside an element with `data-field`), and quotes marked with the CSS Custom Highlight API,
 * which paints ranges without changing the elements Preact keeps.
 */

/** The selection, when it lies within one text field under `root`, as a comment position; else null. */
export function selectionPosition(root: HTMLElement, content: unknown): TextPosition | null {
  const selection = document.getSelection()
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null
  const range = selection.getRangeAt(0)
  const fieldOf = (node: Node) =>
    (node instanceof Element ? node : node.parentElement)?.closest<HTMLElement>('[data-field]')
  const el = fieldOf(range.startContainer)
  if (!el || el !== fieldOf(range.endContainer) || !root.contains(el)) return null
  const field = el.dataset.field ?? ''
  const source = fieldText(content, field)
  const selected = range.toString()
  if (source === undefined || !selected.trim()) return null
  const before = document.createRange()
  before.setStart(el, 0)
  before.setEnd(range.startContainer, range.startOffset)
  return locateQuote(source, field, selected, before.toString().length)
}

/** The range of the page showing `source.slice(start, end)` inside a field's element, when it can be found. */
export function quoteRange(el: HTMLElement, source: string, start: number, end: number): Range | undefined {
  // the field's shown characters, reduced as matchKey reduces, each with its text node and offset
  const chars: Array<{ node: Text; offset: number }> = []
  let shown = ''
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
  for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
    const text = node.data
    for (let i = 0; i < text.length; i++) {
      if (matchKey(text[i]) === '') continue
      chars.push({ node, offset: i })
      shown += text[i]
    }
  }
  const key = matchKey(source.slice(start, end))
  if (!key) return undefined
  const near = matchKey(source.slice(0, start)).length
  let best = -1
  for (let i = shown.indexOf(key); i >= 0; i = shown.indexOf(key, i + 1)) {
    if (best < 0 || Math.abs(i - near) < Math.abs(best - near)) best = i
  }
  if (best < 0) return undefined
  const first = chars[best]
  const last = chars[best + key.length - 1]
  const range = document.createRange()
  range.setStart(first.node, first.offset)
  range.setEnd(last.node, last.offset + 1)
  return range
}

/** Marks the given ranges under a highlight name (nothing where the browser lacks the Highlight API). */
export function paintHighlight(name: string, ranges: Range[]): void {
  if (typeof CSS === 'undefined' || !('highlights' in CSS) || typeof Highlight === 'undefined') return
  if (ranges.length === 0) CSS.highlights.delete(name)
  else CSS.highlights.set(name, new Highlight(...ranges))
}
