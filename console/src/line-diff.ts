/** One row of a side-by-side comparison: a line of the left text, of the right, or of both. */
export interface Row { left?: string; right?: string; kind: 'same' | 'changed' | 'removed' | 'added' }

/**
 * Two texts compared line by line (longest common subsequence), as side-by-side rows: a removed line next to the
 * line added in its place shows as changed. Texts over 2,000 lines are compared as two whole blocks.
 */
export function sideBySide(a: string, b: string): Row[] {
  const left = a.split('\n')
  const right = b.split('\n')
  if (left.length * right.length > 4_000_000) {
    return [{ kind: 'changed', left: a, right: b }]
  }
  const n = left.length
  const m = right.length
  // lcs[i][j]: the longest common subsequence of left[i..] and right[j..]
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = left[i] === right[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
    }
  }
  const rows: Row[] = []
  let removed: string[] = []
  let added: string[] = []
  const flush = () => {
    for (let k = 0; k < Math.max(removed.length, added.length); k++) {
      const l = removed[k]
      const r = added[k]
      rows.push({ left: l, right: r, kind: l !== undefined && r !== undefined ? 'changed' : l !== undefined
        ? 'removed' : 'added' })
    }
    removed = []
    added = []
  }
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && left[i] === right[j]) {
      flush()
      rows.push({ kind: 'same', left: left[i++], right: right[j++] })
    } else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) removed.push(left[i++])
    else added.push(right[j++])
  }
  flush()
  return rows
}

/**
 * A value as lines a person compares: keys and list items one per line, and a string of several lines (a diff, a
 * step's detail) as those lines, not as one escaped JSON string.
 */
export function readable(value: unknown, indent = ''): string {
  if (typeof value === 'string') {
    return value.includes('\n') ? `|\n${value.split('\n').map((l) => `${indent}  ${l}`).join('\n')}`
      : JSON.stringify(value)
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? '[]' : value.map((v) => `\n${indent}- ${readable(v, `${indent}  `)}`).join('')
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
    return entries.length === 0 ? '{}'
      : entries.map(([k, v]) => `\n${indent}${k}: ${readable(v, `${indent}  `)}`).join('')
  }
  return JSON.stringify(value) ?? 'null'
}
