const API: Record<string, { what: string; routes: string[] }> = {
  Knowledge: { what: 'upload and search documents',
    routes: ['POST /api/knowledge/upload', 'POST /api/knowledge/search'] },
  Chat: { what: 'talk with the assistant and the channels',
    routes: ['POST /api/v2/chat/stream', 'GET /api/v2/channels'] },
  'Voice notes': { what: 'record and transcribe',
    routes: ['POST /api/v2/voice-notes/audio', 'GET /api/v2/voice-notes'] },
  Workflows: { what: 'define and run workflows', routes: ['POST /api/v2/workflows', 'GET /api/v2/workflows'] },
  Developer: { what: 'API keys, webhooks and the request log',
    routes: ['POST /api/v2/api-keys', 'POST /api/v2/developer/webhooks', 'GET /api/v2/developer/logs'] },
  Settings: { what: 'people, invitations and workspaces',
    routes: ['GET /api/v2/users', 'POST /api/v2/invitations', 'GET /api/v2/workspaces/{id}/members'] }
}

/** A part of the workspace the console does not show yet: what the API offers there meanwhile. */
export function NotYet(props: { section: string }) {
  const api = API[props.section]
  return (
    <section>
      <h1>{props.section}</h1>
      <p>The console does not show this part of the workspace yet. {api &&
        <>Meanwhile the API does ({api.what}):</>}</p>
      {api && <ul>{api.routes.map((r) => <li key={r}><code>{r}</code></li>)}</ul>}
      <p><a href="/api/docs">The API reference</a> describes every route.</p>
    </section>
  )
}
