import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut, type ChatCitation, type ChatStream } from '../api.js'
import { ErrorText, Link } from '../components.js'
import { Markdown } from '../markdown.js'
import { useSession } from '../session.js'
import { ChatTabs } from './channels-tabs.js'

interface Turn {
  key: number
  question: string
  answer: string
  state: 'streaming' | 'done' | 'stopped' | 'failed'
  citations: ChatCitation[]
  model?: string
  error?: string
}

interface Conversation { id?: string; turns: Turn[] }

/** each workspace's conversation, kept while the console is open (leaving the page and coming back keeps it) */
const kept = new Map<string, Conversation>()
let nextKey = 0

/**
 * A conversation with the assistant: the answer appears as it is written, with the passages of the knowledge base it
 * was made from; `Stop` ends the answer (and the model's work) where it is.
 */
export function ChatPage() {
  const { api, signedOut, workspace } = useSession()
  const [conversation, setConversation] = useState<Conversation>(() => kept.get(workspace.id) ?? { turns: [] })
  const [message, setMessage] = useState('')
  const [error, setError] = useState<string | null>(null)
  const stream = useRef<ChatStream | null>(null)
  const field = useRef<HTMLTextAreaElement>(null)
  const streaming = conversation.turns.some((t) => t.state === 'streaming')

  useEffect(() => { kept.set(workspace.id, conversation) }, [conversation, workspace.id])
  // leaving the page stops an answer under way
  useEffect(() => () => stream.current?.cancel(), [])

  const change = (key: number, f: (t: Turn) => Partial<Turn>) => setConversation((c) =>
    ({ ...c, turns: c.turns.map((t) => t.key === key ? { ...t, ...f(t) } : t) }))

  const send = async (e?: Event) => {
    e?.preventDefault()
    const question = message.trim()
    if (!question) {
      setError('Write a question first.')
      field.current?.focus()
      return
    }
    if (streaming) return
    setError(null)
    setMessage('')
    const key = nextKey++
    setConversation((c) => ({ ...c, turns: [...c.turns, { key, question, answer: '', state: 'streaming',
      citations: [] }] }))
    const s = api.chatStream({ message: question, ...(conversation.id ? { conversationId: conversation.id } : {}) })
    stream.current = s
    try {
      for await (const event of s) {
        if (event.type === 'text_delta') change(key, (t) => ({ answer: t.answer + event.content }))
        else if (event.type === 'done') {
          change(key, () => ({ answer: event.reply, state: 'done', citations: event.citations ?? [],
            model: event.model }))
          setConversation((c) => ({ ...c, id: event.conversationId }))
        } else {
          change(key, () => ({ state: 'failed', error: event.message }))
        }
      }
      // the loop ends without done or error: stopped by the person, or the connection was cut
      change(key, (t) => t.state === 'streaming' ? { state: 'stopped' } : {})
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      change(key, () => ({ state: 'failed', error: describeError(err) }))
    } finally {
      if (stream.current === s) stream.current = null
    }
  }

  const stop = () => {
    stream.current?.cancel()
    field.current?.focus()
  }
  const restart = () => {
    stream.current?.cancel()
    setConversation({ turns: [] })
    setError(null)
    field.current?.focus()
  }

  return (
    <section class="chat">
      <h1>Chat</h1>
      <ChatTabs current="assistant" />
      <p class="lead">Ask the assistant about what your team knows: it searches the knowledge base of {workspace.name}
        {' '}and shows the passages it answered from.</p>
      {conversation.turns.length === 0
        ? (
            <p class="empty">No questions yet. Ask one below, e.g. “What does the handbook say about on-call?”. The
              assistant answers from the documents in <Link href="/knowledge">Knowledge</Link>: upload some first if it
              is empty.</p>
          )
        : (
            <ol class="conversation" aria-label="Conversation">
              {conversation.turns.map((t) => <TurnView key={t.key} turn={t} />)}
            </ol>
          )}
      <form class="chat-form" onSubmit={send}>
        <label>
          Message
          <textarea ref={field} rows={3} value={message} maxLength={20_000}
            aria-describedby={error ? 'chat-error' : 'chat-hint'}
            onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e) }} />
        </label>
        <ErrorText error={error} id="chat-error" />
        <p class="chat-buttons">
          {streaming
            ? <button type="button" class="reject" onClick={stop}>Stop</button>
            : <button type="submit">Send</button>}
          {conversation.turns.length > 0 &&
            <button type="button" onClick={restart}>New conversation</button>}
          <span class="hint" id="chat-hint">Ctrl+Enter sends.</span>
        </p>
      </form>
    </section>
  )
}

function TurnView(props: { turn: Turn }) {
  const t = props.turn
  return (
    <li class="turn">
      <div class="question">
        <p class="who-said">You</p>
        <p class="question-text">{t.question}</p>
      </div>
      <div class="answer" aria-busy={t.state === 'streaming' ? 'true' : 'false'}>
        <p class="who-said">Assistant{t.model ? <span class="meta"> · {t.model}</span> : null}</p>
        {t.answer ? <Markdown text={t.answer} /> : t.state === 'streaming' ? <p class="meta">Thinking…</p> : null}
        {t.state === 'streaming' && <p class="meta" aria-live="polite">Writing…</p>}
        {t.state === 'stopped' && <p class="meta">Stopped: the answer ends here.</p>}
        {t.state === 'failed' && <ErrorText error={t.error ?? 'The assistant could not answer.'} />}
        {t.citations.length > 0 && (
          <section class="citations" aria-label="Cited passages">
            <h3>Cited passages</h3>
            <ol>
              {t.citations.map((c) => (
                <li key={c.chunkId}>
                  <Link href={`/knowledge/documents/${c.documentId}?passage=${c.chunkIndex + 1}`}>
                    {c.fileName}, passage {c.chunkIndex + 1}
                  </Link>
                  <p class="excerpt">{c.excerpt}{c.excerpt.length >= 300 ? '…' : ''}</p>
                </li>
              ))}
            </ol>
          </section>
        )}
        {t.state === 'done' && t.citations.length === 0 &&
          <p class="meta">No passage of the knowledge base was used for this answer.</p>}
      </div>
    </li>
  )
}
