import type { ComponentChildren } from 'preact'

const KEYWORDS = new Set(('abstract as async await break case catch class const continue def default del delete do ' +
  'elif else enum except export extends false final finally fn for from func function go if impl implements import ' +
  'in instanceof interface is lambda let match mod mut new nil none not null or package pass private protected ' +
  'pub public raise return self static struct super switch this throw true try type typeof undefined use var void ' +
  'while with yield').split(' '))

const TOKEN = /(\/\/.*$|#.*$|\/\*.*?\*\/)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d[\d_.]*\b)|(\b[A-Za-z_]\w*\b)/g

/** A line of code with its comments, strings, numbers and keywords marked (text only, never HTML). */
export function highlight(code: string): ComponentChildren[] {
  const out: ComponentChildren[] = []
  let last = 0
  for (const m of code.matchAll(TOKEN)) {
    const [whole, comment, string, number, word] = m
    if (word && !KEYWORDS.has(word)) continue
    if (m.index > last) out.push(code.slice(last, m.index))
    const cls = comment ? 'tok-comment' : string ? 'tok-string' : number ? 'tok-number' : 'tok-keyword'
    out.push(<span class={cls}>{whole}</span>)
    last = m.index + whole.length
  }
  if (last < code.length) out.push(code.slice(last))
  return out
}
