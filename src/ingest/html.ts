import type { DomNode, FormatCallback, HtmlToTextOptions, SelectorDefinition } from 'html-to-text'

/**
 * HTML to text that keeps a page's structure (docs/api/knowledge.md, "Extracted text"): headings as Markdown
 * `#` lines, table rows one to a line with ` | ` between cells, code blocks fenced with their line breaks,
 * definition lists as "term: definition", list items on lines of their own; site furniture (navigation,
 * banners, footers, sidebars, "Prev Up Home Next" link bars) dropped; every block element on its own line, so
 * that words of neighbouring blocks never run together.
 */

type Builder = Parameters<FormatCallback>[2]
type Walk = Parameters<FormatCallback>[1]
type Cell = { colspan: number; rowspan: number; text: string }

/** elements that start a block of their own (html-to-text treats anything it does not know as inline) */
const BLOCK_ELEMENTS = ['address', 'article', 'blockquote', 'caption', 'center', 'details', 'dialog', 'dd', 'dt',
  'fieldset', 'figcaption', 'figure', 'form', 'hgroup', 'legend', 'li', 'main', 'menu', 'section', 'summary',
  'tbody', 'thead', 'tfoot', 'tr', 'td', 'th', 'hr', 'noframes', 'optgroup']
/** never text a reader would search for */
const SKIPPED = ['script', 'style', 'noscript', 'template', 'img', 'svg', 'button', 'select', 'textarea', 'iframe',
  'object', 'embed', 'canvas', 'video', 'audio', 'map', 'datalist', 'input', 'meta', 'link', 'nav',
  'a.headerlink', 'a.anchorjs-link', 'a.header-anchor', 'span.anchor-link']
/** roles and class names that mark site furniture rather than the page's own text */
const FURNITURE_ROLES = ['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menubar', 'toolbar']
const FURNITURE_CLASSES = ['navheader', 'navfooter', 'navbar', 'breadcrumb', 'breadcrumbs', 'sphinxsidebar',
  'sidebar', 'skip-link', 'skiplink', 'site-header', 'site-footer', 'page-footer', 'footer',
  // MediaWiki, Javadoc, MkDocs, Read the Docs, Docusaurus
  'printfooter', 'catlinks', 'navbox', 'topNav', 'bottomNav', 'subNav', 'md-header', 'md-sidebar', 'md-footer',
  'wy-nav-side', 'rst-footer-buttons', 'theme-edit-this-page']
/** furniture inside the text: "[edit]" links beside headings, "Jump to navigation", a DOCX note's "↑" link back */
const FURNITURE_INLINE = ['span.mw-editsection', 'a.mw-jump-link', 'a[href^="#footnote-ref-"]',
  'a[href^="#endnote-ref-"]']

/** The text of one link in a navigation bar, lower case, letters only. */
const NAV_LINKS = new Set(['', 'prev', 'previous', 'next', 'up', 'home', 'top', 'index', 'contents', 'toc',
  'table of contents', 'back', 'forward', 'fast backward', 'fast forward', 'modules', 'back to top', 'go to top',
  'to top', 'skip to content', 'skip to main content', 'skip navigation', 'previous page', 'next page',
  'previous topic', 'next topic', 'previous chapter', 'next chapter', 'up one level', 'go up', 'first', 'last',
  'general index', 'search', 'next section', 'previous section', 'prev page'])

/** At most this much text (and these many nodes) is looked at to decide whether a block is a link bar. */
const LINK_BAR_MAX_TEXT = 400
const LINK_BAR_MAX_NODES = 120
/** a link bar may carry this much text outside its links (DocBook's names the neighbouring pages) */
const LINK_BAR_OTHER_TEXT = 100

const isTag = (n: DomNode) => n.type === 'tag'
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim()
const navWord = (s: string) => s.toLowerCase().replace(/[^\p{L}]+/gu, ' ').trim()
const SEPARATORS = /[\s|·•‧∙:;,.\-–—«»‹›<>←→↑^[\]()/]+/gu

/**
 * True for a block made of navigation links ("Prev Up Home Next", "« Previous | Next »") and little else.
 * Looks at a bounded part of the block, so that checking every block stays linear in the page.
 */
function isLinkBar(elem: DomNode): boolean {
  let budget = LINK_BAR_MAX_NODES
  let textLength = 0
  let other = ''
  const links: string[] = []
  // in document order, each node with the index of the link it is in (-1: none); no recursion, as pages nest deep
  const stack: [DomNode, number][] = elem.children.map((c): [DomNode, number] => [c, -1]).reverse()
  while (stack.length > 0) {
    if (--budget < 0) return false
    const [node, link] = stack.pop()!
    if (node.type === 'text') {
      const data = node.data ?? ''
      textLength += data.length
      if (textLength > LINK_BAR_MAX_TEXT) return false
      if (link < 0) other += ` ${data}`
      else links[link] += data
    } else if (isTag(node)) {
      const inLink = link < 0 && node.name === 'a' ? links.push('') - 1 : link
      for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], inLink])
    }
  }
  if (links.length === 0 || !links.every((text) => NAV_LINKS.has(navWord(text)))) return false
  const rest = other.replace(SEPARATORS, ' ').trim()
  return rest === '' || (links.length >= 2 && rest.length <= LINK_BAR_OTHER_TEXT)
}

/** A header, footer or aside inside an article, a main part or a section belongs to it; elsewhere to the site. */
function insideContent(elem: DomNode): boolean {
  for (let p = elem.parent; p; p = p.parent) {
    if (p.name === 'article' || p.name === 'main' || p.name === 'section') return true
  }
  return false
}

/** Looks for an element by name below `elem`, not below the elements named in `stopAt`. */
function contains(elem: DomNode, names: Set<string>, stopAt?: Set<string>): boolean {
  const stack = [...elem.children]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (!isTag(node)) continue
    if (names.has(node.name!)) return true
    if (!stopAt?.has(node.name!)) stack.push(...node.children)
  }
  return false
}

const H1 = new Set(['h1'])
const CALLOUT = /\b(note|notice|warning|tip|hint|caution|important|admonition|callout|danger|attention)\b/i

const block = (builder: Builder, walk: Walk, elem: DomNode, lines = 1) => {
  builder.openBlock({ leadingLineBreaks: lines })
  walk(elem.children, builder)
  builder.closeBlock({ trailingLineBreaks: lines })
}

const formatBlockOrBar = (name: string): FormatCallback => (elem, walk, builder, options) => {
  if (isLinkBar(elem)) return
  builder.options.formatters![name](elem, walk, builder, options)
}

/** `header` and `footer`: kept inside the page's content (and a header holding the page's title), else dropped. */
const formatLandmark: FormatCallback = (elem, walk, builder) => {
  if (insideContent(elem) || (elem.name === 'header' && contains(elem, H1))) block(builder, walk, elem)
}

/** `aside`: a sidebar unless it is a note or warning. */
const formatAside: FormatCallback = (elem, walk, builder) => {
  const attribs = (elem.attribs ?? {}) as Record<string, string>
  if (attribs.role === 'note' || CALLOUT.test(attribs.class ?? '')) block(builder, walk, elem, 2)
}

const formatHeading: FormatCallback = (elem, walk, builder) => {
  const level = Number(elem.name!.slice(1))
  builder.openBlock({ leadingLineBreaks: 2 })
  walk(elem.children, builder)
  builder.closeBlock({
    trailingLineBreaks: 2,
    blockTransform: (s) => {
      const text = oneLine(s)
      return text ? `${'#'.repeat(level)} ${text}` : ''
    }
  })
}

/** A code block, fenced (with more backticks than it holds in a row) so that its lines are never read as headings. */
const formatCode: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2, isPre: true })
  walk(elem.children, builder)
  builder.closeBlock({
    trailingLineBreaks: 2,
    blockTransform: (s) => {
      const body = s.replace(/^\s*\n/, '').trimEnd()
      if (!body.trim()) return ''
      const longest = Math.max(2, ...Array.from(body.matchAll(/`+/g), (m) => m[0].length))
      const fence = '`'.repeat(longest + 1)
      return `${fence}\n${body}\n${fence}`
    }
  })
}

/** where a term ends and its definition starts; NUL never occurs in extracted text (it is refused, or U+FFFD) */
const TERM_END = '\u0000'

/** `dl`: each group of terms and its definitions as "term, term: definition". */
const formatDefinitions: FormatCallback = (elem, walk, builder) => {
  // HTML allows each group to be wrapped in a div
  const items = elem.children.flatMap((c) => c.name === 'div' ? c.children : [c]).filter(isTag)
  if (!items.some((item) => item.name === 'dd')) {
    // terms with no definitions: a list (DocBook writes its tables of contents so)
    block(builder, walk, elem)
    return
  }
  builder.openBlock({ leadingLineBreaks: 2 })
  for (let i = 0; i < items.length;) {
    const terms: DomNode[] = []
    const definitions: DomNode[] = []
    while (i < items.length && items[i].name !== 'dd') terms.push(items[i++])
    while (i < items.length && items[i].name === 'dd') definitions.push(items[i++])
    const long = definitions.some((d) => d.children.some((c) => isTag(c) && !INLINE_IN_DEFINITION.has(c.name!)))
    builder.openBlock({ leadingLineBreaks: long ? 2 : 1 })
    terms.forEach((term, n) => {
      if (n > 0) builder.addLiteral(', ')
      walk(term.children, builder)
    })
    if (terms.length > 0 && definitions.length > 0) builder.addLiteral(TERM_END)
    walk(definitions, builder)
    builder.closeBlock({ trailingLineBreaks: long ? 2 : 1, blockTransform: joinDefinition })
  }
  builder.closeBlock({ trailingLineBreaks: 2 })
}
const INLINE_IN_DEFINITION = new Set(['a', 'abbr', 'b', 'code', 'em', 'i', 'kbd', 'samp', 'span', 'strong', 'sub',
  'sup', 'var', 'tt', 'small', 'mark', 'q', 'cite', 'dfn', 'time', 'br'])

function joinDefinition(s: string): string {
  const at = s.indexOf(TERM_END)
  if (at < 0) return s
  const term = s.slice(0, at).replace(/[\s:]+$/, '')
  const rest = s.slice(at + 1)
  const definition = rest.trimStart()
  if (!definition) return term
  if (!term) return definition
  // a definition that starts with a code block or a list keeps it on lines of its own
  return /^(```|- |\d+\. )/.test(definition) ? `${term}:\n${definition}` : `${term}: ${definition}`
}

const TABLE_PARTS = new Set(['thead', 'tbody', 'tfoot'])
const LAYOUT_SIGNS = new Set(['table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'])
const span = (value: unknown) => Math.min(1000, Math.max(1, Math.floor(Number(value)) || 1))

/**
 * `table`: a data table one row to a line, cells joined by ` | `; a table that lays out a page (it holds
 * tables or headings) as the blocks it holds; a table of navigation links dropped.
 */
const formatTable: FormatCallback = (elem, walk, builder) => {
  if (isLinkBar(elem)) return
  const attribs = (elem.attribs ?? {}) as Record<string, string>
  if (attribs.role === 'presentation' || attribs.role === 'none' || contains(elem, LAYOUT_SIGNS, LAYOUT_SIGNS)) {
    block(builder, walk, elem, 2)
    return
  }
  builder.openTable()
  const cell = (node: DomNode) => {
    builder.openTableCell()
    walk(node.children, builder)
    const attribs = (node.attribs ?? {}) as Record<string, string>
    builder.closeTableCell({ colspan: span(attribs.colspan), rowspan: span(attribs.rowspan) })
  }
  const rows = (parent: DomNode) => {
    for (const node of parent.children) {
      if (!isTag(node)) continue
      if (TABLE_PARTS.has(node.name!)) {
        rows(node)
      } else if (node.name === 'tr') {
        builder.openTableRow()
        for (const c of node.children) if (c.name === 'td' || c.name === 'th') cell(c)
        builder.closeTableRow()
      } else if (node.name === 'caption') {
        builder.openTableRow()
        cell(node)
        builder.closeTableRow()
      }
    }
  }
  rows(elem)
  builder.closeTable({ tableToString: tableLines, leadingLineBreaks: 2, trailingLineBreaks: 2 })
}

/** A cell on one line: a code block in a cell loses its fences and line breaks. */
const cellText = (text: string) => oneLine(text.replace(/^`{3,}$/gm, ''))

/**
 * The rows of a table, one to a line; a cell spanning rows is repeated in each, so that every row reads alone. The
 * work is linear in the cells and the rows (past its own cells a row jumps to the next column a cell above still
 * spans), and repetition stops once the table's text is four times what its cells hold (plus 64 KB): a few bytes
 * of `rowspan` must not become megabytes of text.
 */
export function tableLines(rows: Cell[][]): string {
  const carried = new Map<number, { text: string; left: number; colspan: number }>()
  let budget = 65_536
  for (const row of rows) for (const cell of row) budget += 4 * cell.text.length
  const lines: string[] = []
  let written = 0
  const nextCarried = (from: number) => {
    let found: number | undefined
    for (const c of carried.keys()) if (c >= from && (found === undefined || c < found)) found = c
    return found
  }
  for (const row of rows) {
    const out: string[] = []
    const repeat = written < budget
    let col = 0
    let next = 0
    for (;;) {
      const held = carried.get(col)
      if (held) {
        out.push(repeat ? held.text : '')
        if (--held.left === 0) carried.delete(col)
        col += held.colspan
        continue
      }
      if (next >= row.length) {
        const c = nextCarried(col)
        if (c === undefined) break
        col = c
        continue
      }
      const cell = row[next++]
      const text = cellText(cell.text)
      out.push(text)
      if (cell.rowspan > 1) carried.set(col, { text, left: cell.rowspan - 1, colspan: cell.colspan })
      col += cell.colspan
    }
    while (out.length > 0 && out[out.length - 1] === '') out.pop()
    if (out.some((c) => c !== '')) {
      const line = out.join(' | ').replace(/\| {2}\|/g, '| |').trim()
      lines.push(line)
      written += line.length + 1
    }
  }
  return lines.join('\n')
}

/** `title`: the document's title, as its first heading, when its body has no `h1` of its own. */
const formatTitle: FormatCallback = (elem, walk, builder) => {
  const state = (builder as unknown as { metadata: { titled?: boolean } }).metadata
  const parent = elem.parent?.name
  if (state.titled || (parent !== undefined && parent !== 'head' && parent !== 'html')) return
  state.titled = true
  let root = elem
  while (root.parent) root = root.parent
  if (contains(root, H1)) return
  builder.openBlock({ leadingLineBreaks: 2 })
  walk(elem.children, builder)
  builder.closeBlock({
    trailingLineBreaks: 2,
    // DocBook pages title their body with an h2 that repeats the title
    blockTransform: (s) => !oneLine(s) || sameText(oneLine(s), firstHeading(root)) ? '' : `# ${oneLine(s)}`
  })
}

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'])

/** The text of the first heading of a document, in document order. */
function firstHeading(root: DomNode): string {
  const stack = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node !== root && !isTag(node)) continue
    if (HEADINGS.has(node.name!)) return textOf(node)
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i])
  }
  return ''
}

function textOf(node: DomNode): string {
  if (node.type === 'text') return node.data ?? ''
  return node.children.map(textOf).join('')
}

const sameText = (a: string, b: string) => a.toLowerCase() === oneLine(b).toLowerCase()

/** `a`: its text, without the address; "Skip to main content" links are dropped. */
const formatLink: FormatCallback = (elem, walk, builder, options) => {
  if (elem.children.length === 1 && /^skip (to|navigation)/.test(navWord(textOf(elem.children[0])))) return
  builder.options.formatters!.anchor(elem, walk, builder, options)
}

const FORMATTERS: Record<string, FormatCallback> = {
  cairnLink: formatLink,
  cairnHeading: formatHeading,
  cairnCode: formatCode,
  cairnDefinitions: formatDefinitions,
  cairnTable: formatTable,
  cairnLandmark: formatLandmark,
  cairnAside: formatAside,
  cairnTitle: formatTitle,
  cairnBlock: formatBlockOrBar('block'),
  cairnParagraph: formatBlockOrBar('paragraph'),
  cairnUnorderedList: formatBlockOrBar('unorderedList'),
  cairnOrderedList: formatBlockOrBar('orderedList')
}

const lines = (n: number) => ({ leadingLineBreaks: n, trailingLineBreaks: n })
const SELECTORS: SelectorDefinition[] = [
  ...BLOCK_ELEMENTS.map((selector) => ({ selector, format: 'block', options: lines(1) })),
  { selector: 'div', format: 'cairnBlock', options: lines(1) },
  { selector: 'p', format: 'cairnParagraph', options: lines(2) },
  // a list item's paragraphs, like its own text, take no blank line
  { selector: 'li > p', format: 'cairnParagraph', options: lines(1) },
  { selector: 'ul', format: 'cairnUnorderedList', options: { itemPrefix: '- ' } },
  { selector: 'ol', format: 'cairnOrderedList' },
  { selector: 'a', format: 'cairnLink', options: { ignoreHref: true } },
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'cairnHeading' })),
  { selector: 'pre', format: 'cairnCode' },
  { selector: 'dl', format: 'cairnDefinitions' },
  // DocBook's tables of contents are lists of entries made with dl: an entry a line
  { selector: 'dl.toc', format: 'block', options: lines(1) },
  { selector: 'table', format: 'cairnTable' },
  { selector: 'header', format: 'cairnLandmark' },
  { selector: 'footer', format: 'cairnLandmark' },
  { selector: 'aside', format: 'cairnAside' },
  { selector: 'title', format: 'cairnTitle' },
  ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
  ...FURNITURE_ROLES.map((role) => ({ selector: `[role=${role}]`, format: 'skip' })),
  ...FURNITURE_CLASSES.flatMap((c) => ['div', 'ul', 'ol'].map((e) => ({ selector: `${e}.${c}`, format: 'skip' }))),
  ...FURNITURE_INLINE.map((selector) => ({ selector, format: 'skip' }))
]

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  // a zero-width space marks where a long word may wrap: it is taken out below, not made a space
  whitespaceCharacters: ' \t\r\n\f',
  // the whole document: the title from its head, and pages without a body element
  baseElements: { selectors: [], returnDomByDefault: true },
  // the extraction limits bound a page; html-to-text would otherwise cut a long one short without a word
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER },
  formatters: FORMATTERS,
  selectors: SELECTORS
}

type Converter = (html: string, metadata: object) => string
let converter: Converter | undefined

/** The text of an HTML page (already decoded and checked for depth). */
export async function htmlToStructuredText(html: string): Promise<string> {
  if (!converter) {
    const { compile } = await import('html-to-text')
    converter = compile(OPTIONS) as unknown as Converter
  }
  return converter(html, {}).replace(/\u200b/g, '').replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim()
}
