import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText, Link } from '../components.js'
import { useSession } from '../session.js'
import { at, ConfirmButton, OnceValue, Pager, pageOf, useAction, type Answer } from './developer-parts.js'
import { Webhooks, WebhookPage } from './developer-webhooks.js'
import { EventLog } from './developer-logs.js'

type ApiKey = Answer<'/api/v2/api-keys'>['data'][number]

/** The scopes a key can be given, with what each allows. */
const SCOPES: Array<[string, string]> = [
  ['read', 'read knowledge, workflows and developer data'], ['write', 'create and change'],
  ['execute', 'run workflows and agents'],
  ['knowledge:read', 'search and read the knowledge base'], ['knowledge:write', 'upload documents'],
  ['artifacts:read', 'read artifacts and follow the event stream'], ['artifacts:write', 'write artifacts and comments']
]
const KEYS_PAGE = 10
const USAGE_DAYS = 30

/** The developer pages: API keys (`/developer`), webhooks (`/developer/webhooks[/id]`) and the event log. */
export function Developer(props: { path: string }) {
  const { path } = props
  const hook = /^\/developer\/webhooks\/([^/]+)$/.exec(path)
  const tab = path.startsWith('/developer/webhooks') ? 'webhooks' : path.startsWith('/developer/logs') ? 'logs' : 'keys'
  return (
    <section>
      <h1>Developer</h1>
      <nav class="tabs" aria-label="Developer">
        <Link href="/developer" current={tab === 'keys'}>API keys</Link>
        <Link href="/developer/webhooks" current={tab === 'webhooks'}>Webhooks</Link>
        <Link href="/developer/logs" current={tab === 'logs'}>Event log</Link>
      </nav>
      {tab === 'keys' && <ApiKeys />}
      {tab === 'webhooks' && (hook ? <WebhookPage id={decodeURIComponent(hook[1])} key={hook[1]} /> : <Webhooks />)}
      {tab === 'logs' && <EventLog />}
    </section>
  )
}

function keyState(k: ApiKey): string {
  if (k.revoked_at) return `Revoked ${at(k.revoked_at)}`
  if (k.expires_at && new Date(k.expires_at).getTime() <= Date.now()) return `Expired ${at(k.expires_at)}`
  return k.expires_at ? `Active until ${at(k.expires_at)}` : 'Active'
}

function ApiKeys() {
  const { api, signedOut, me } = useSession()
  const [keys, setKeys] = useState<ApiKey[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  const [shown, setShown] = useState<{ name: string; key: string; rotated: boolean } | null>(null)

  const load = async () => {
    try {
      const list = (await api.call('/api/v2/api-keys', 'get')).data
      // the live keys first, each group newest first
      list.sort((a, b) => Number(!!a.revoked_at) - Number(!!b.revoked_at) || b.created_at.localeCompare(a.created_at))
      setKeys(list)
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => { void load() }, [api])

  const workspaceName = (id: string | null) => id === null ? 'Every workspace'
    : me.workspaces.find((w) => w.id === id)?.name ?? 'A workspace you have left'
  return (
    <>
      <h2>API keys</h2>
      <p class="lead">Keys let scripts, assistants and other services call Cairn as you. Each key has the scopes you
        give it and, when bound, works in one workspace only.</p>
      <CreateKey onCreated={(k) => {
        setShown({ name: k.name, key: k.key, rotated: false })
        setPage(1)
        void load()
      }} />
      {shown && (
        <OnceValue label="New API key" value={shown.key} onDone={() => setShown(null)}
          note={<>
            <strong>{shown.rotated ? `The new value of “${shown.name}”.` : `“${shown.name}” is ready.`}</strong>{' '}
            Copy it now: Cairn keeps only its fingerprint and will not show it again.
            {shown.rotated && ' The old value has stopped working.'}</>} />
      )}
      <ErrorText error={error} />
      {keys === null && !error && <p>Loading…</p>}
      {keys !== null && keys.length === 0 && (
        <p class="empty">You have no API keys yet. Name one above, choose its scopes and press “Create API key”.</p>
      )}
      {keys !== null && keys.length > 0 && (
        <>
          <ul class="cards" aria-label="Your API keys">
            {pageOf(keys, page, KEYS_PAGE).map((k) => (
              <li key={k.id} class={k.revoked_at ? 'card revoked' : 'card'} aria-labelledby={`key-${k.id}`}>
                <div class="card-main">
                  <h3 id={`key-${k.id}`}>{k.name}</h3>
                  <dl class="facts">
                    <div><dt>Key</dt><dd><code>{k.key_prefix}…</code></dd></div>
                    <div><dt>Scopes</dt><dd>{k.scopes.join(', ')}</dd></div>
                    <div><dt>Workspace</dt><dd>{workspaceName(k.workspace_id)}</dd></div>
                    <div><dt>State</dt><dd>{keyState(k)}</dd></div>
                    <div><dt>Created</dt><dd>{at(k.created_at)}</dd></div>
                    <div><dt>Last used</dt><dd>{k.last_used_at ? at(k.last_used_at) : 'never'}</dd></div>
                  </dl>
                </div>
                <Usage id={k.id} name={k.name} />
                {!k.revoked_at && (
                  <div class="actions">
                    <ConfirmButton label="Rotate" signedOut={signedOut}
                      question={`Replace “${k.name}” with a new value? The current value stops working at once.`}
                      confirm="Rotate now" run={async () => {
                        const next = (await api.call('/api/v2/api-keys/{id}/rotate', 'post',
                          { path: { id: k.id } })).data
                        setShown({ name: next.name, key: next.key, rotated: true })
                        await load()
                      }} />
                    <ConfirmButton label="Revoke" class="danger" signedOut={signedOut}
                      question={`Revoke “${k.name}”? It stops working at once, for good.`}
                      confirm="Revoke for good" run={async () => {
                        await api.call('/api/v2/api-keys/{id}', 'delete', { path: { id: k.id } })
                        await load()
                      }} />
                  </div>
                )}
              </li>
            ))}
          </ul>
          <Pager page={page} count={keys.length} size={KEYS_PAGE} noun="keys" onPage={setPage} />
        </>
      )}
    </>
  )
}

function CreateKey(props: { onCreated(key: { name: string; key: string }): void }) {
  const { api, signedOut, workspace } = useSession()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<string[]>(['read'])
  const [bound, setBound] = useState(true)
  const [expires, setExpires] = useState('')
  const { busy, error, setError, run } = useAction(signedOut)

  const submit = (event: Event) => {
    event.preventDefault()
    if (scopes.length === 0) return setError('Choose at least one scope.')
    void run(async () => {
      const expiresAt = expires ? new Date(`${expires}T23:59:59`).toISOString() : undefined
      const created = (await api.call('/api/v2/api-keys', 'post', { body: {
        name: name.trim(), scopes, ...(bound ? { workspaceId: workspace.id } : {}), ...(expiresAt ? { expiresAt } : {})
      } })).data
      setName('')
      setExpires('')
      props.onCreated(created)
    })
  }
  const toggle = (scope: string, on: boolean) =>
    setScopes((s) => on ? [...s.filter((x) => x !== scope), scope] : s.filter((x) => x !== scope))
  return (
    <form class="panel form-grid" onSubmit={submit} aria-label="New API key">
      <label>
        Key name
        <input type="text" required maxLength={100} value={name} placeholder="e.g. CI pipeline"
          onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        <div class="checks">
          {SCOPES.map(([scope, what]) => (
            <label key={scope} class="check">
              <input type="checkbox" checked={scopes.includes(scope)}
                onChange={(e) => toggle(scope, (e.target as HTMLInputElement).checked)} />
              <span><code>{scope}</code> <span class="hint">{what}</span></span>
            </label>
          ))}
        </div>
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={bound} onChange={(e) => setBound((e.target as HTMLInputElement).checked)} />
        <span>Only in the workspace {workspace.name}</span>
      </label>
      <label>
        Expires on (optional)
        <input type="date" value={expires} min={new Date().toISOString().slice(0, 10)}
          onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorText error={error} />
      <div><button type="submit" disabled={busy}>Create API key</button></div>
    </form>
  )
}

/** The UTC date `back` days before today. */
const dayOf = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10)

/** Requests per day over the last 30 days, drawn as bars (today last), with the figures for screen readers. */
function Usage(props: { id: string; name: string }) {
  const { api } = useSession()
  const [days, setDays] = useState<number[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    let stopped = false
    api.call('/api/v2/developer/api-keys/{id}/usage', 'get', { path: { id: props.id }, query: { days: USAGE_DAYS } })
      .then((r) => { if (!stopped) setDays(r.data.sparkline) },
        (err: unknown) => { if (!stopped) setError(describeError(err)) })
    return () => { stopped = true }
  }, [api, props.id])
  if (error) return <p class="hint">Usage unavailable: {error}</p>
  if (!days) return <p class="hint">Loading usage…</p>
  const total = days.reduce((a, b) => a + b, 0)
  const max = Math.max(1, ...days)
  const w = 4
  const h = 32
  return (
    <figure class="usage">
      <svg class="sparkline" role="img" viewBox={`0 0 ${days.length * w} ${h}`} width={days.length * w * 2} height={h}
        aria-label={`Requests per day with ${props.name} over the last ${days.length} days: ${total} in all, ` +
          `${days[days.length - 1]} today, at most ${Math.max(...days)} in a day`}>
        <line x1="0" y1={h - 0.5} x2={days.length * w} y2={h - 0.5} class="axis" />
        {days.map((n, i) => {
          const bar = n === 0 ? 0 : Math.max(1.5, (n / max) * (h - 2))
          return <rect key={i} x={i * w + 0.5} y={h - 1 - bar} width={w - 1} height={bar}>
            <title>{`${n} on ${dayOf(days.length - 1 - i)}`}</title>
          </rect>
        })}
      </svg>
      <figcaption class="hint">{total} requests in {days.length} days</figcaption>
    </figure>
  )
}
