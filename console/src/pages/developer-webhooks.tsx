import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText, Link } from '../components.js'
import { navigate } from '../router.js'
import { useSession } from '../session.js'
import { at, ConfirmButton, OnceValue, Pager, pageOf, useAction, type Answer, TableWrap } from './developer-parts.js'

type Webhook = Answer<'/api/v2/developer/webhooks'>['data'][number]
type Delivery = Answer<'/api/v2/developer/webhooks/{id}/deliveries'>['data'][number]

type WebhookEvent = Answer<'/api/v2/developer/webhooks/events'>['data'][number]
const DELIVERIES_PAGE = 10
/** how often an open delivery log asks again while the page is visible (deliveries are not on the event stream) */
const DELIVERY_REFRESH_MS = 3000

function manages(role: string, orgRole: string) {
  return role === 'owner' || role === 'admin' || orgRole === 'owner' || orgRole === 'admin'
}

/** The workspace's webhooks and the form that adds one. */
export function Webhooks() {
  const { api, signedOut, workspace, me } = useSession()
  const [hooks, setHooks] = useState<Webhook[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null)
  const [page, setPage] = useState(1)
  const admin = manages(workspace.role, me.orgRole)

  const load = async () => {
    try {
      setHooks((await api.call('/api/v2/developer/webhooks', 'get')).data)
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => { void load() }, [api])

  return (
    <>
      <h2>Webhooks</h2>
      <p class="lead">Cairn sends the events of {workspace.name} to these addresses, signed with each webhook's secret
        (both the X-Cairn-Signature and the Standard Webhooks headers).</p>
      {admin
        ? <CreateWebhook onCreated={(h) => { setCreated(h); void load() }} />
        : <p class="hint">Only owners and admins of {workspace.name} can add or change webhooks.</p>}
      {created && (
        <OnceValue label="Signing secret" value={created.secret} onDone={() => setCreated(null)}
          note={<><strong>The webhook is ready.</strong> Copy its signing secret now: it is not shown again.{' '}
            <Link href={`/developer/webhooks/${created.id}`}>Open the webhook</Link> to send a test.</>} />
      )}
      <ErrorText error={error} />
      {hooks === null && !error && <p>Loading…</p>}
      {hooks !== null && hooks.length === 0 && (
        <p class="empty">{admin
          ? 'No webhooks yet. Enter the address of your receiver above, pick its events and press “Create webhook”.'
          : 'No webhooks yet. Ask an owner or admin of this workspace to add one.'}</p>
      )}
      {hooks !== null && hooks.length > 0 && (
        <>
          <TableWrap label="Webhooks">
            <table class="grid">
              <caption class="visually-hidden">Webhooks of {workspace.name}</caption>
              <thead><tr><th scope="col">Address</th><th scope="col">Events</th><th scope="col">State</th>
                <th scope="col">Created</th></tr></thead>
              <tbody>
                {pageOf(hooks, page, 20).map((h) => (
                  <tr key={h.id}>
                    <td><Link href={`/developer/webhooks/${h.id}`}>{h.url}</Link>
                      {h.description && <div class="hint">{h.description}</div>}</td>
                    <td>{h.events.join(', ')}</td>
                    <td>{h.active ? 'Active' : 'Inactive'}</td>
                    <td>{at(h.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={page} count={hooks.length} size={20} noun="webhooks" onPage={setPage} />
        </>
      )}
    </>
  )
}

/** The event names the service accepts, as it lists them (the ones it sends first). */
function EventPicker(props: { value: string[]; onChange(events: string[]): void }) {
  const { api, signedOut } = useSession()
  const [events, setEvents] = useState<WebhookEvent[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const load = async () => {
    setError(null)
    try {
      const list = (await api.call('/api/v2/developer/webhooks/events', 'get')).data
      setEvents([...list.filter((e) => e.sent), ...list.filter((e) => !e.sent)])
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => { void load() }, [api])
  return (
    <fieldset>
      <legend>Events</legend>
      {events === null && !error && <p>Loading the events…</p>}
      {error && (
        <div>
          <ErrorText error={`The events could not be loaded: ${error}`} />
          <button type="button" onClick={() => void load()}>Try again</button>
        </div>
      )}
      <div class="checks">
        {events?.map((e) => (
          <label key={e.name} class="check">
            <input type="checkbox" checked={props.value.includes(e.name)} onChange={(ev) => {
              const on = (ev.target as HTMLInputElement).checked
              const rest = props.value.filter((x) => x !== e.name)
              props.onChange(on ? [...rest, e.name] : rest)
            }} />
            <span><code>{e.name}</code> <span class="hint">{e.description}</span></span>
          </label>
        ))}
      </div>
    </fieldset>
  )
}

function CreateWebhook(props: { onCreated(hook: { id: string; secret: string }): void }) {
  const { api, signedOut } = useSession()
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<string[]>(['test.ping'])
  const { busy, error, setError, run } = useAction(signedOut)
  const submit = (event: Event) => {
    event.preventDefault()
    if (events.length === 0) return setError('Choose at least one event.')
    void run(async () => {
      const hook = (await api.call('/api/v2/developer/webhooks', 'post', { body: {
        url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {})
      } })).data
      setUrl('')
      setDescription('')
      props.onCreated({ id: hook.id, secret: hook.signing_secret })
    })
  }
  return (
    <form class="panel form-grid" onSubmit={submit} aria-label="New webhook">
      <label>
        Webhook URL
        <input type="url" required maxLength={2048} value={url} placeholder="https://example.com/hooks/cairn"
          aria-describedby={error ? 'webhook-error' : undefined}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Description (optional)
        <input type="text" maxLength={500} value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <EventPicker value={events} onChange={setEvents} />
      <ErrorText error={error} id="webhook-error" />
      <div><button type="submit" disabled={busy}>Create webhook</button></div>
    </form>
  )
}

/** One webhook: its settings, a test, its secret's rotation and the delivery log with redelivery. */
export function WebhookPage(props: { id: string }) {
  const { api, signedOut, workspace, me } = useSession()
  const [hook, setHook] = useState<Webhook | null | undefined>(undefined)
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  const [tested, setTested] = useState<string | null>(null)
  const admin = manages(workspace.role, me.orgRole)
  const test = useAction(signedOut)
  const rotate = useAction(signedOut)
  const toggle = useAction(signedOut)

  const loadHook = async () => {
    const list = (await api.call('/api/v2/developer/webhooks', 'get')).data
    setHook(list.find((h) => h.id === props.id) ?? null)
  }
  const loadDeliveries = async () => {
    try {
      const list = (await api.call('/api/v2/developer/webhooks/{id}/deliveries', 'get',
        { path: { id: props.id } })).data
      setDeliveries(list)
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      if (err instanceof Error && 'statusCode' in err && err.statusCode === 404) return setHook(null)
      setError(describeError(err))
    }
  }
  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    loadHook().catch((err: unknown) => { if (isSignedOut(err)) signedOut(); else setError(describeError(err)) })
    const tick = async () => {
      if (stopped) return
      if (document.visibilityState === 'visible') await loadDeliveries()
      if (!stopped) timer = setTimeout(tick, DELIVERY_REFRESH_MS)
    }
    void tick()
    return () => { stopped = true; clearTimeout(timer) }
  }, [api, props.id])

  if (hook === null) {
    return (
      <>
        <h2>Webhook not found</h2>
        <p>This webhook does not exist in {workspace.name}.{' '}
          <Link href="/developer/webhooks">See the webhooks</Link>.</p>
      </>
    )
  }
  if (hook === undefined) return <><ErrorText error={error} />{!error && <p>Loading…</p>}</>

  const sendTest = () => test.run(async () => {
    const r = (await api.call('/api/v2/developer/webhooks/{id}/test', 'post', { path: { id: hook.id } })).data
    setTested(r.delivered ? `Delivered: the receiver answered ${r.status_code} in ${r.latency_ms} ms.`
      : `Not delivered: ${r.error ?? `the receiver answered ${r.status_code}`}.`)
    setPage(1)
    await loadDeliveries()
  })
  const rotateSecret = () => rotate.run(async () => {
    const r = (await api.call('/api/v2/developer/webhooks/{id}/rotate-secret', 'post', { path: { id: hook.id } })).data
    setSecret(r.signing_secret)
  })
  const setActive = (active: boolean) => toggle.run(async () => {
    await api.call('/api/v2/developer/webhooks/{id}', 'put', { path: { id: hook.id }, body: { active } })
    await loadHook()
  })

  return (
    <>
      <p class="crumbs"><Link href="/developer/webhooks">Webhooks</Link> / this webhook</p>
      <h2 class="url-title">{hook.url}</h2>
      {hook.description && <p>{hook.description}</p>}
      <dl class="facts">
        <div><dt>Events</dt><dd>{hook.events.join(', ')}</dd></div>
        <div><dt>State</dt><dd>{hook.active ? 'Active' : 'Inactive: nothing is sent'}</dd></div>
        <div><dt>Created</dt><dd>{at(hook.created_at)}</dd></div>
      </dl>
      {admin && (
        <div class="actions">
          <span>
            <button type="button" disabled={test.busy} onClick={sendTest}
              aria-describedby="test-outcome">Send test</button>
          </span>
          <ConfirmButton label="Rotate secret" signedOut={signedOut}
            question="Make a new signing secret? The old one keeps signing too, for 24 hours."
            confirm="Make a new secret" run={rotateSecret} />
          <button type="button" disabled={toggle.busy} onClick={() => setActive(!hook.active)}>
            {hook.active ? 'Pause deliveries' : 'Resume deliveries'}</button>
          <ConfirmButton label="Delete webhook" class="danger" signedOut={signedOut}
            question="Delete this webhook and its delivery log?" confirm="Delete for good" run={async () => {
              await api.call('/api/v2/developer/webhooks/{id}', 'delete', { path: { id: hook.id } })
              navigate('/developer/webhooks')
            }} />
        </div>
      )}
      <p id="test-outcome" role="status" class={tested?.startsWith('Not') ? 'error' : 'hint'}>
        {test.busy ? 'Sending…' : tested ?? ''}</p>
      <ErrorText error={test.error ?? rotate.error ?? toggle.error} />
      {secret && (
        <OnceValue label="New signing secret" value={secret} onDone={() => setSecret(null)}
          note={<><strong>The new secret signs every delivery from now on.</strong> Copy it now: it is not shown again.
            The old secret signs too (a second signature) for 24 hours, time to update the receiver.</>} />
      )}
      <h3 id="deliveries-title" class="section-title">Deliveries</h3>
      <p class="hint">The last 50 attempts, newest first; refreshed while this page is open.</p>
      <ErrorText error={error} />
      {deliveries !== null && deliveries.length === 0 && (
        <p class="empty">Nothing was sent yet. {admin ? 'Press “Send test” to send a test.ping now.'
          : 'Deliveries appear here when one of its events happens.'}</p>
      )}
      {deliveries !== null && deliveries.length > 0 && (
        <>
          <TableWrap label="Deliveries">
            <table class="grid deliveries" aria-labelledby="deliveries-title">
              <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Latency</th>
                <th scope="col">Attempt</th><th scope="col">Sent</th><th scope="col">Body</th>
                {admin && <th scope="col"><span class="visually-hidden">Actions</span></th>}</tr></thead>
              <tbody>
                {pageOf(deliveries, page, DELIVERIES_PAGE).map((d) => (
                  <DeliveryRow key={d.id} delivery={d} webhookId={hook.id} admin={admin}
                    onRedelivered={() => { setPage(1); void loadDeliveries() }} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={page} count={deliveries.length} size={DELIVERIES_PAGE} noun="deliveries" onPage={setPage}
            label="Pages of deliveries" />
        </>
      )}
    </>
  )
}

function DeliveryRow(props: { delivery: Delivery; webhookId: string; admin: boolean; onRedelivered(): void }) {
  const { api, signedOut } = useSession()
  const d = props.delivery
  const { busy, error, run } = useAction(signedOut)
  const [sent, setSent] = useState(false)
  const redeliver = () => run(async () => {
    await api.call('/api/v2/developer/webhooks/{id}/deliveries/{deliveryId}/redeliver', 'post',
      { path: { id: props.webhookId, deliveryId: d.id } })
    setSent(true)
    props.onRedelivered()
  })
  const status = d.success ? `Delivered (${d.status_code})`
    : d.status_code > 0 ? `Failed (${d.status_code})` : 'Failed (no answer)'
  return (
    <tr class={d.success ? 'ok' : 'failed'}>
      <td><code>{d.event_type}</code></td>
      <td>
        <span class={d.success ? 'delivered' : 'not-delivered'}>{status}</span>
        {d.error && <div class="hint">{d.error}</div>}
        {d.next_attempt_at && <div class="hint">Next try {at(d.next_attempt_at)}</div>}
      </td>
      <td>{d.latency_ms} ms</td>
      <td>{d.attempt}</td>
      <td>{at(d.created_at)}</td>
      <td class="body-cell">
        <details>
          <summary>{d.request_body.body_bytes} bytes{d.request_body.truncated ? ' (preview)' : ''}</summary>
          <pre>{d.request_body.body_preview}</pre>
          {d.response_body && <><p class="hint">The receiver answered:</p><pre>{d.response_body}</pre></>}
        </details>
      </td>
      {props.admin && (
        <td>
          <button type="button" disabled={busy || sent} onClick={redeliver}>Redeliver</button>
          {sent && <span class="hint" role="status"> Sent again</span>}
          <ErrorText error={error} />
        </td>
      )}
    </tr>
  )
}
