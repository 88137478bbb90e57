import t from 'tap'
import { readPage } from './pages.js'
import { SUPPORTED_FORMATS } from '../../src/ingest/formats.js'
import { EVENT_NAMES } from '../../src/events/names.js'
import { STREAM_EVENT_NAMES } from '../../src/events/workspace-stream.js'
import { ISSUABLE_SCOPES } from '../../src/auth/capabilities.js'
import { TOOLS } from '../../src/mcp/tools.js'

// the lists the API pages state are the lists the code keeps

/** The text of a page from a heading to the next heading of the same level or above. */
function section(page: string, heading: string): string {
  const text = readPage(page)
  const m = new RegExp(`^(#+) ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm').exec(text)
  if (!m) throw new Error(`${page} has no heading "${heading}"`)
  const rest = text.slice(m.index + m[0].length)
  const next = new RegExp(`^#{1,${m[1].length}} `, 'm').exec(rest)
  return next ? rest.slice(0, next.index) : rest
}

/** `code` spans of the first column of a section's table rows. */
function firstColumn(text: string): string[] {
  return [...text.matchAll(/^\| ([^|]*) \|/gm)]
    .flatMap(([, cell]) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1].split(/[\s{]/)[0]))
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort()

t.test('the knowledge formats are the supported formats', async (t) => {
  const uploading = section('docs/api/knowledge.md', 'Uploading')
  const formats = /\*\*Formats\*\*:([\s\S]*?)up to 50 MB/.exec(uploading)?.[1] ?? ''
  t.same(sorted(formats.match(/\.[a-z0-9]+/g) ?? []), sorted(SUPPORTED_FORMATS))
})

t.test('the webhook events are the events a webhook may subscribe to', async (t) => {
  const events = section('docs/api/webhooks.md', 'Events')
  t.same(sorted([...events.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1])), sorted(EVENT_NAMES))
})

t.test('the event stream\'s table holds the stream\'s events', async (t) => {
  const names = firstColumn(readPage('docs/api/events.md')).filter((n) => n.includes('.'))
  t.same(sorted(names), sorted(STREAM_EVENT_NAMES))
})

t.test('the scope table holds every scope a key can be given', async (t) => {
  t.same(sorted(firstColumn(section('docs/api/auth.md', 'API keys and scopes'))), sorted(ISSUABLE_SCOPES))
})

t.test('the MCP page lists every tool', async (t) => {
  const names = firstColumn(section('docs/mcp.md', 'Tools'))
  t.same(sorted(names), sorted(TOOLS.map((tool) => tool.name)))
})
