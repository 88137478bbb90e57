/** A piece of a search snippet: text, and whether it is a match. */
export interface SnippetPart { text: string; mark: boolean }

/**
 * A search result's snippet (matches between `<mark>` and `</mark>`, everything else the document's own characters)
 * as pieces of text to render as text nodes: nothing in it is ever read as HTML. An unclosed `<mark>` marks to the
 * end; a stray `</mark>` is dropped.
 */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = []
  const push = (text: string, mark: boolean) => {
    if (!text) return
    const last = parts[parts.length - 1]
    if (last && last.mark === mark) last.text += text
    else parts.push({ text, mark })
  }
  let marked = false
  let at = 0
  for (const m of snippet.matchAll(/<\/?mark>/g)) {
    push(snippet.slice(at, m.index), marked)
    marked = m[0] === '<mark>'
    at = m.index + m[0].length
  }
  push(snippet.slice(at), marked)
  return parts
}

/** A size in bytes for people: 912 B, 14.2 KB, 3.1 MB. */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB']
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++ }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[u]}`
}

/** Seconds as m:ss (or h:mm:ss), for a transcript's times. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`
}

/** "1 passage", "3 passages" */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`
}
