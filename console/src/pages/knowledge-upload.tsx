import { useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText } from '../components.js'
import { byteSize, plural } from '../format.js'
import { useSession } from '../session.js'

type Scope = 'workspace' | 'personal' | 'organization'

interface Item {
  key: number
  file: File
  state: 'ready' | 'uploading' | 'done' | 'failed'
  sent: number
  message?: string
  documentId?: string
}

let nextKey = 0

/**
 * Upload several files at once: chosen with the `Files` input or dropped on the area, each with its own progress
 * and its own answer (a refused file says why beside its name; the others go on).
 */
export function Uploader(props: { onUploaded(): void }) {
  const { api, signedOut, workspace } = useSession()
  const [items, setItems] = useState<Item[]>([])
  const [scope, setScope] = useState<Scope>('workspace')
  const [category, setCategory] = useState('')
  const [tags, setTags] = useState('')
  const [busy, setBusy] = useState(false)
  const [dragging, setDragging] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const input = useRef<HTMLInputElement>(null)

  const add = (files: FileList | File[] | null) => {
    if (!files || files.length === 0) return
    setError(null)
    setItems((now) => [...now.filter((i) => i.state !== 'done'),
      ...Array.from(files, (file) => ({ key: nextKey++, file, state: 'ready' as const, sent: 0 }))])
  }
  const update = (key: number, change: Partial<Item>) =>
    setItems((now) => now.map((i) => i.key === key ? { ...i, ...change } : i))

  const upload = async (e?: Event) => {
    e?.preventDefault()
    const waiting = items.filter((i) => i.state === 'ready' || i.state === 'failed')
    if (waiting.length === 0) {
      setError('Choose one or more files first (or drop them on this area).')
      input.current?.focus()
      return
    }
    setBusy(true)
    setError(null)
    const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean)
    let uploaded = 0
    // one file after another: each answer comes once its text is extracted and searchable
    for (const item of waiting) {
      update(item.key, { state: 'uploading', sent: 0, message: undefined })
      try {
        const out = await api.uploadDocument({ data: item.file, fileName: item.file.name }, {
          scope, ...(category.trim() ? { category: category.trim() } : {}),
          ...(tagList.length ? { tags: tagList } : {}),
          onProgress: (sent) => update(item.key, { sent })
        })
        uploaded++
        update(item.key, { state: 'done', sent: item.file.size, documentId: out.document.id,
          message: plural(out.document.chunkCount, 'passage') })
      } catch (err) {
        if (isSignedOut(err)) return signedOut()
        update(item.key, { state: 'failed', message: describeError(err) })
      }
    }
    setBusy(false)
    if (uploaded > 0) {
      props.onUploaded()
      if (input.current) input.current.value = ''
    }
  }

  const pending = items.filter((i) => i.state !== 'done').length
  return (
    <form class={`upload${dragging ? ' dragging' : ''}`} onSubmit={upload} aria-labelledby="upload-title"
      onDragOver={(e) => { e.preventDefault(); setDragging(true) }}
      onDragLeave={(e) => { if (e.currentTarget === e.target) setDragging(false) }}
      onDrop={(e) => { e.preventDefault(); setDragging(false); add(e.dataTransfer?.files ?? null) }}>
      <h2 id="upload-title">Upload</h2>
      <p class="hint">Drop files here, or choose them. PDF, Word, text, Markdown, HTML, CSV, JSON, YAML and source
        code; up to 50 MB each.</p>
      <div class="upload-fields">
        <label>
          Files
          <input ref={input} type="file" multiple onChange={(e) => add((e.target as HTMLInputElement).files)} />
        </label>
        <label>
          Shared with
          <select value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as Scope)}>
            <option value="workspace">Members of {workspace.name}</option>
            <option value="personal">Only me</option>
            <option value="organization">The whole organization</option>
          </select>
        </label>
        <label>
          Category
          <input type="text" value={category} placeholder="optional" maxLength={100}
            onInput={(e) => setCategory((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Tags
          <input type="text" value={tags} placeholder="comma, separated" maxLength={500}
            onInput={(e) => setTags((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      {items.length > 0 && (
        <ul class="upload-list" aria-label="Files to upload">
          {items.map((i) => (
            <li key={i.key} class={`upload-${i.state}`}>
              <span class="file-name">{i.file.name}</span>
              <span class="meta">{byteSize(i.file.size)}</span>
              <progress max={Math.max(1, i.file.size)} value={i.state === 'done' ? i.file.size
                : i.state === 'uploading' ? i.sent : 0} aria-label={`Progress of ${i.file.name}`} />
              <span class={i.state === 'failed' ? 'error' : 'meta'} role={i.state === 'failed' ? 'alert' : undefined}>
                {i.state === 'ready' ? 'Ready' : i.state === 'uploading'
                  ? (i.sent >= i.file.size ? 'Reading its text…' : `Uploading ${Math.floor((i.sent / Math.max(1,
                      i.file.size)) * 100)}%`)
                  : i.state === 'done' ? `Uploaded: ${i.message}` : i.message}
              </span>
              {i.state !== 'uploading' && (
                <button type="button" class="link-button" aria-label={`Remove ${i.file.name} from the list`}
                  onClick={() => setItems((now) => now.filter((x) => x.key !== i.key))}>Remove</button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={error} />
      <p>
        <button type="submit" disabled={busy}>Upload</button>
        {' '}<span class="meta" aria-live="polite">{busy ? 'Uploading…' : pending > 0
          ? `${plural(pending, 'file')} to upload` : ''}</span>
      </p>
    </form>
  )
}
