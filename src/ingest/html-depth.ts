import { UnreadableFileError } from './text.js'

/**
 * How deeply elements may nest in an HTML upload. The HTML parser (htmlparser2) takes time growing with
 * the square of the depth, and html-to-text walks the tree recursively: a deep enough page exhausts the
 * stack. Real pages nest a few dozen levels.
 */
export const MAX_HTML_DEPTH = 1000

const VOID = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input',
  'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'])
/** an element that closes an open one of these at the top of the stack, as the parser does (a subset) */
const CLOSES: Record<string, Set<string>> = {
  li: new Set(['li']), p: new Set(['p']), option: new Set(['option']), tr: new Set(['tr', 'th', 'td']),
  th: new Set(['th']), td: new Set(['th', 'td']), dd: new Set(['dt', 'dd']), dt: new Set(['dt', 'dd'])
}
const TAG = /<!--[\s\S]*?(?:-->|$)|<(\/?)([a-zA-Z][^\s/>]*)/g

/**
 * Refuses HTML nested deeper than `max`, by a scan that never counts less depth than the parser sees: close
 * tags close what the parser closes, implied closes are only the subset above.
 */
export function checkHtmlDepth(html: string, max = MAX_HTML_DEPTH): void {
  const stack: string[] = []
  for (const m of html.matchAll(TAG)) {
    if (m[2] === undefined) continue
    const name = m[2].toLowerCase()
    if (m[1]) {
      const at = stack.lastIndexOf(name)
      if (at >= 0) stack.length = at
      continue
    }
    if (VOID.has(name)) continue
    const closes = CLOSES[name]
    while (closes && stack.length > 0 && closes.has(stack[stack.length - 1])) stack.pop()
    stack.push(name)
    if (stack.length > max) throw new UnreadableFileError(`HTML nested more than ${max} levels deep: refused`)
  }
}
