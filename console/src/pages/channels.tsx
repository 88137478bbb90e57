import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut, type Channel, type ChannelMessage } from '../api.js'
import { ErrorText, Link, when } from '../components.js'
import { Markdown } from '../markdown.js'
import { navigate } from '../router.js'
import { useSession } from '../session.js'
import { watchWorkspace } from '../live.js'
import { ChatTabs } from './channels-tabs.js'

/** messages read at a time (the newest first, then older ones on request) */
const PAGE = 50
/** how often the page asks again, while visible, when the event stream cannot be opened */
const REFRESH_MS = 5000

const TYPES: Array<[Channel['type'], string]> = [
  ['public', 'Public: every member reads and writes'], ['announcement', 'Announcements'],
  ['text', 'Text'], ['private', 'Private: only its members']
]
const typeWords = (type: string) => TYPES.find(([t]) => t === type)?.[1].split(':')[0] ?? type

/** Oldest first, each message once (a message both posted here and told by the event stream is one). */
export function mergeMessages(current: ChannelMessage[], incoming: ChannelMessage[]): ChannelMessage[] {
  const byId = new Map(current.map((m) => [m.id, m]))
  for (const m of incoming) byId.set(m.id, m)
  return [...byId.values()].sort((a, b) => a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1
    : a.id < b.id ? -1 : 1)
}

/** The workspace's channels (`/chat/channels`) and one channel's messages (`/chat/channels/<id>`), live. */
export function ChannelsPage(props: { id?: string }) {
  const { api, signedOut, workspace } = useSession()
  const [channels, setChannels] = useState<Channel[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  // one more for each burst of new messages: the open channel reads its newest page again
  const [tick, setTick] = useState(0)

  const load = async () => {
    try {
      setChannels(await api.listChannels())
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => {
    void load()
    // a message may be the first sign of a channel made elsewhere: the list is read again too
    return watchWorkspace(workspace.id, {
      wants: (event) => event === 'message.created',
      onChange: async () => { setTick((n) => n + 1); await load() }, pollMs: REFRESH_MS
    })
  }, [api])

  return (
    <section class="channels-page">
      <h1>Chat</h1>
      <ChatTabs current="channels" />
      <div class="channels-layout">
        <aside class="channel-list" aria-labelledby="channels-title">
          <h2 id="channels-title">Channels</h2>
          <ErrorText error={error} />
          {channels === null && !error && <p>Loading…</p>}
          {channels?.length === 0 && (
            <p class="empty">No channels yet. Create the first one below: give it a name and say who reads it.</p>
          )}
          {channels && channels.length > 0 && (
            <ul>
              {channels.map((c) => (
                <li key={c.id}>
                  <Link href={`/chat/channels/${c.id}`} current={c.id === props.id}>{c.name}</Link>
                  <span class="meta"> · {typeWords(c.type)}</span>
                </li>
              ))}
            </ul>
          )}
          {/* folded away once there are channels to read, open when the list is empty */}
          <details class="new-channel-box" open={channels?.length === 0}>
            <summary>New channel</summary>
            <NewChannel onCreated={(c) => { void load(); navigate(`/chat/channels/${c.id}`) }} />
          </details>
        </aside>
        <div class="channel-main">
          {props.id
            ? <ChannelView id={props.id} key={props.id} channel={channels?.find((c) => c.id === props.id)}
                listed={channels !== null} tick={tick} />
            : channels && channels.length > 0 && <p class="empty">Choose a channel to read its messages.</p>}
        </div>
      </div>
      <p class="hint">Messages arrive here as they are posted, without a reload. Those of public, announcement and
        text channels are also sent to webhooks as <code>message.created</code>.</p>
    </section>
  )
}

function NewChannel(props: { onCreated(channel: Channel): void }) {
  const { api, signedOut } = useSession()
  const [name, setName] = useState('')
  const [type, setType] = useState<Channel['type']>('public')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const field = useRef<HTMLInputElement>(null)

  const create = async (e: Event) => {
    e.preventDefault()
    if (!name.trim()) {
      setError('Give the channel a name.')
      field.current?.focus()
      return
    }
    setBusy(true)
    setError(null)
    try {
      const channel = await api.createChannel({ name: name.trim(), type })
      setName('')
      props.onCreated(channel)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="new-channel" onSubmit={create} aria-label="New channel">
      <label>
        Channel name
        <input ref={field} type="text" value={name} maxLength={100}
          aria-describedby={error ? 'new-channel-error' : undefined}
          onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Type
        <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as Channel['type'])}>
          {TYPES.map(([value, words]) => <option key={value} value={value}>{words}</option>)}
        </select>
      </label>
      <ErrorText error={error} id="new-channel-error" />
      <button type="submit" disabled={busy}>Create channel</button>
    </form>
  )
}

function ChannelView(props: { id: string; channel?: Channel; listed: boolean; tick: number }) {
  const { api, signedOut, workspace } = useSession()
  const [messages, setMessages] = useState<ChannelMessage[] | null>(null)
  const [more, setMore] = useState(false)
  const [missing, setMissing] = useState(false)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [olderError, setOlderError] = useState<string | null>(null)
  const [names, setNames] = useState<Map<string, string>>(new Map())
  const first = useRef(true)

  const fail = (err: unknown, set: (text: string) => void) => {
    if (isSignedOut(err)) signedOut()
    else set(describeError(err))
  }
  // the newest page, merged into what is shown (older pages read earlier stay)
  const loadNewest = async () => {
    try {
      const page = await api.channelMessages(props.id, { limit: PAGE })
      if (first.current) setMore(page.length === PAGE)
      first.current = false
      setMessages((current) => mergeMessages(current ?? [], page))
      setLoadError(null)
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) setMissing(true)
      else fail(err, setLoadError)
    }
  }
  const loadOlder = async () => {
    if (!messages?.length) return
    setOlderError(null)
    try {
      const page = await api.channelMessages(props.id, { limit: PAGE, before: messages[0].created_at })
      setMore(page.length === PAGE)
      setMessages((current) => mergeMessages(current ?? [], page))
    } catch (err) {
      fail(err, setOlderError)
    }
  }

  useEffect(() => { void loadNewest() }, [api, props.id, props.tick])
  useEffect(() => {
    let stopped = false
    api.workspaceMembers(workspace.id).then((list) => {
      if (!stopped) setNames(new Map(list.map((m) => [m.user_id, m.name || m.email])))
    }, () => { /* names are a nicety: ids are shown without them */ })
    return () => { stopped = true }
  }, [api, props.id])

  if (missing) {
    return (
      <section aria-labelledby="channel-title">
        <h2 id="channel-title">Channel not found</h2>
        <p>It was deleted, you are not one of its members, or it belongs to another workspace. Choose one of the
          channels listed.</p>
      </section>
    )
  }
  const title = props.channel?.name ?? (props.listed ? 'Channel' : '…')
  const who = (m: ChannelMessage) => m.ai_twin_id ? 'Assistant' : names.get(m.sender_id) ?? m.sender_id
  return (
    <section class="channel" aria-labelledby="channel-title">
      <h2 id="channel-title">{title}</h2>
      {props.channel && <p class="meta">{TYPES.find(([t]) => t === props.channel?.type)?.[1] ?? props.channel.type}</p>}
      <ErrorText error={loadError} />
      {more && (
        <p>
          <button type="button" onClick={loadOlder}>Older messages</button>
          <ErrorText error={olderError} />
        </p>
      )}
      {messages === null && !loadError && <p>Loading…</p>}
      {messages?.length === 0 && <p class="empty">No messages yet. Write the first one below.</p>}
      {messages && messages.length > 0 && (
        <div role="log" aria-label="Messages">
          <ol class="messages">
            {messages.map((m) => (
              <li key={m.id} class="message">
                <p class="comment-meta"><strong>{who(m)}</strong> · <time dateTime={m.created_at}>{when(m.created_at)}
                </time></p>
                <Markdown text={m.content} />
              </li>
            ))}
          </ol>
        </div>
      )}
      <PostMessage channelId={props.id} onPosted={(m) => setMessages((current) => mergeMessages(current ?? [], [m]))} />
    </section>
  )
}

function PostMessage(props: { channelId: string; onPosted(message: ChannelMessage): void }) {
  const { api, signedOut } = useSession()
  const [text, setText] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const field = useRef<HTMLTextAreaElement>(null)

  const send = async (e: Event) => {
    e.preventDefault()
    if (!text.trim()) {
      setError('Write a message first.')
      field.current?.focus()
      return
    }
    setBusy(true)
    setError(null)
    try {
      props.onPosted(await api.postMessage({ channel_id: props.channelId, content: text }))
      setText('')
      field.current?.focus()
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="chat-form post-message" onSubmit={send}>
      <label>
        Message
        <textarea ref={field} rows={3} value={text} maxLength={40_000}
          aria-describedby={error ? 'message-error' : 'message-hint'}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e) }} />
      </label>
      <ErrorText error={error} id="message-error" />
      <p class="chat-buttons">
        <button type="submit" disabled={busy}>Send</button>
        <span class="hint" id="message-hint">Ctrl+Enter sends.</span>
      </p>
    </form>
  )
}
