import { Link } from '../components.js'
import './channels.css'

/** The two sides of Chat: the assistant, and the workspace's channels where people (and the assistant) post. */
export function ChatTabs(props: { current: 'assistant' | 'channels' }) {
  return (
    <nav class="tabs" aria-label="Chat">
      <Link href="/chat" current={props.current === 'assistant'}>Assistant</Link>
      <Link href="/chat/channels" current={props.current === 'channels'}>Channels</Link>
    </nav>
  )
}
