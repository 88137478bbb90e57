import { useState } from 'preact/hooks'
import { describeError, isSignedOut, type Artifact, type ChainLink } from '../api.js'
import { ErrorText, Link, statusText, when } from '../components.js'
import { readable, sideBySide } from '../line-diff.js'
import { useSession } from '../session.js'

/** An artifact's versions (its chain, oldest first), and any two of them compared side by side. */
export function Versions(props: { chain: ChainLink[]; current: string }) {
  const { api, signedOut } = useSession()
  const chain = props.chain
  const index = chain.findIndex((v) => v.id === props.current)
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [rows, setRows] = useState<ReturnType<typeof sideBySide> | null>(null)
  const [error, setError] = useState<string | null>(null)
  const left = from || chain[Math.max(0, index - 1)]?.id || ''
  const right = to || props.current

  const compare = async () => {
    setError(null)
    try {
      const [a, b] = await Promise.all([api.getArtifact(left), api.getArtifact(right)])
      const show = (x: Artifact) => `title: ${x.title}${readable(x.content)}`
      setRows(sideBySide(show(a), show(b)))
    } catch (err) {
      if (isSignedOut(err)) signedOut()
      else setError(describeError(err))
    }
  }
  const label = (i: number) => i < 0 ? 'Version' : `Version ${i + 1}: ${statusText(chain[i].status)}`
  return (
    <section class="versions" aria-label="Versions">
      <h2>Versions</h2>
      <ol>
        {chain.map((v, i) => (
          <li key={v.id}>
            {v.id === props.current ? <strong aria-current="page">{label(i)} (this one)</strong>
              : <Link href={`/artifacts/${v.id}`}>{label(i)}</Link>} · {v.title} · {when(v.created_at)}
          </li>
        ))}
      </ol>
      {chain.length > 1 && (
        <div class="compare-controls">
          <label>
            From
            <select value={left} onChange={(e) => setFrom((e.target as HTMLSelectElement).value)}>
              {chain.map((v, i) => <option key={v.id} value={v.id}>{label(i)}</option>)}
            </select>
          </label>
          <label>
            To
            <select value={right} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
              {chain.map((v, i) => <option key={v.id} value={v.id}>{label(i)}</option>)}
            </select>
          </label>
          <button type="button" onClick={compare}>Compare</button>
          <ErrorText error={error} />
        </div>
      )}
      {rows && (
        <div class="side-by-side-wrap">
          <table class="side-by-side" aria-label="Comparison of two versions">
            <thead><tr><th scope="col">{label(chain.findIndex((v) => v.id === left))}</th>
              <th scope="col">{label(chain.findIndex((v) => v.id === right))}</th></tr></thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i} class={`cmp-${r.kind}`}>
                  <td><pre>{r.left ?? ''}</pre></td>
                  <td><pre>{r.right ?? ''}</pre></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
