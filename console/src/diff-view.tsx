import { highlight } from './highlight.js'
import { Summary, arr, obj, type ContentProps } from './content.js'

interface DiffLine { kind: 'add' | 'del' | 'ctx' | 'hunk' | 'meta'; text: string; old?: number; new?: number }
interface DiffFile { path: string; lines: DiffLine[] }

/**
 * A unified diff, file by file, each line with its old and new line numbers. Inside a hunk the header's counts
 * say which lines are content, so a removed line that reads "-- x" is not taken for a file header.
 */
export function parseDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = []
  let file: DiffFile | undefined
  let oldNo = 0
  let newNo = 0
  let oldLeft = 0
  let newLeft = 0
  const start = (path: string) => { file = { path, lines: [] }; files.push(file); return file }
  for (const line of diff.replace(/\r\n?/g, '\n').split('\n')) {
    if (oldLeft > 0 || newLeft > 0) {
      const f = file ?? start('')
      if (line.startsWith('+')) {
        f.lines.push({ kind: 'add', text: line.slice(1), new: newNo++ })
        newLeft--
        continue
      }
      if (line.startsWith('-')) {
        f.lines.push({ kind: 'del', text: line.slice(1), old: oldNo++ })
        oldLeft--
        continue
      }
      if (line.startsWith(' ') || line === '') {
        f.lines.push({ kind: 'ctx', text: line.slice(1), old: oldNo++, new: newNo++ })
        oldLeft--
        newLeft--
        continue
      }
      if (line.startsWith('\\')) continue // "\ No newline at end of file"
      oldLeft = newLeft = 0
    }
    if (line.startsWith('diff --git')) start(/ b\/(.+)$/.exec(line)?.[1] ?? '')
    else if (line.startsWith('--- ')) {
      if (!file || file.lines.length > 0) start('')
    } else if (line.startsWith('+++ ')) (file ?? start('')).path = line.slice(4).replace(/^b\//, '').trim()
    else if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line)
      oldNo = m ? Number(m[1]) : 0
      newNo = m ? Number(m[3]) : 0
      oldLeft = m ? Number(m[2] ?? 1) : 0
      newLeft = m ? Number(m[4] ?? 1) : 0
      ;(file ?? start('')).lines.push({ kind: 'hunk', text: line })
    }
  }
  return files
}

/** A code change: its summary, the files' counts, and the diff file by file with a comment button per new line. */
export function CodeChange(props: ContentProps) {
  const c = props.content
  const files = parseDiff(String(c.diff))
  return (
    <>
      <Summary text={c.summary} field="summary" content={props} />
      {arr(c.files).length > 0 && (
        <ul class="file-stats">{arr(c.files).map((raw, i) => {
          const f = obj(raw)
          return <li key={i}><code>{String(f.path ?? '')}</code>{' '}
            <span class="add">+{Number(f.additions ?? 0)}</span>{' '}
            <span class="del">−{Number(f.deletions ?? 0)}</span></li>
        })}</ul>
      )}
      {files.map((file, fi) => (
        <div class="diff-file" key={fi}>
          <h2 class="diff-path">{file.path || 'Diff'}</h2>
          <table class="diff">
            <thead class="visually-hidden">
              <tr><th>Old line</th><th>New line</th><th>Change</th><th>Comments</th></tr>
            </thead>
            <tbody>
              {file.lines.filter((l) => l.kind !== 'meta').map((l, i) => {
                const key = l.new !== undefined ? `line:${file.path}:${l.new}` : undefined
                const list = key ? props.comments.get(key) ?? [] : []
                return (
                  <tr key={i} class={`diff-${l.kind}`}>
                    <td class="ln">{l.old ?? ''}</td>
                    <td class="ln">{l.new ?? ''}</td>
                    <td class="code"><span class="sign">{l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>
                      {l.kind === 'hunk' ? l.text : highlight(l.text)}</td>
                    <td class="line-side">
                      {l.new !== undefined && (
                        <button type="button" class="line-button" onClick={() => props.onCommentOn({
                          position: { kind: 'line', path: file.path, line: l.new, side: 'new' },
                          label: `line ${l.new} of ${file.path}`
                        })}>
                          <span class="visually-hidden">Comment on line {l.new}</span>
                          <span aria-hidden="true">+</span>
                        </button>
                      )}
                      {list.length > 0 && props.renderComments(list)}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ))}
    </>
  )
}
