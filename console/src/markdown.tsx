import type { ComponentChildren, VNode } from 'preact'

/**
 * Markdown rendered safely: a small, common subset (headings, paragraphs, lists, fenced code, inline code,
 * emphasis, links) built as elements, never as HTML. Any HTML in the text is shown as the characters it is;
 * only http(s) and mailto links become links.
 */
export function Markdown(props: { text: unknown; inline?: boolean }) {
  const text = typeof props.text === 'string' ? props.text : props.text == null ? '' : JSON.stringify(props.text)
  if (props.inline) return <>{inline(text)}</>
  return <div class="md">{blocks(text)}</div>
}

export function safeHref(url: string): string | undefined {
  return /^(https?:\/\/|mailto:)/i.test(url.trim()) ? url.trim() : undefined
}

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|\b_[^_\n]+_\b)|\[([^\]\n]+)\]\(([^)\s]+)\)/g

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = []
  let last = 0
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index))
    const [whole, code, strong, em, label, url] = m
    if (code) out.push(<code>{code.slice(1, -1)}</code>)
    else if (strong) out.push(<strong>{inline(strong.slice(2, -2))}</strong>)
    else if (em) out.push(<em>{inline(em.slice(1, -1))}</em>)
    else if (label !== undefined) {
      const href = safeHref(url)
      out.push(href ? <a href={href} rel="noopener noreferrer nofollow" target="_blank">{inline(label)}</a> : whole)
    }
    last = m.index + whole.length
  }
  if (last < text.length) out.push(text.slice(last))
  return out
}

function blocks(text: string): VNode[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  const out: VNode[] = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    if (line.trim() === '') { i++; continue }
    const fence = /^\s*(```|~~~)/.exec(line)
    if (fence) {
      const body: string[] = []
      i++
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++])
      i++
      out.push(<pre><code>{body.join('\n')}</code></pre>)
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      // headings inside content sit below the page's own: h3 at most
      const level = Math.min(6, heading[1].length + 2)
      const Tag = `h${level}` as 'h3'
      out.push(<Tag>{inline(heading[2])}</Tag>)
      i++
      continue
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line)
      const items: string[] = []
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        items.push(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ''))
        i++
      }
      const lis = items.map((item) => <li>{inline(item)}</li>)
      out.push(ordered ? <ol>{lis}</ol> : <ul>{lis}</ul>)
      continue
    }
    const para: string[] = []
    while (i < lines.length && lines[i].trim() !== '' && !/^\s*(```|~~~|#{1,6}\s|([-*+]|\d+[.)])\s+)/.test(lines[i])) {
      para.push(lines[i++])
    }
    if (para.length === 0) para.push(lines[i++])
    out.push(<p>{inline(para.join('\n'))}</p>)
  }
  return out
}
