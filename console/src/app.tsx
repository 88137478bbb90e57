import type { VNode } from 'preact'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { client, describeError, inWorkspace, isSignedOut, type Me } from './api.js'
import { ErrorText, Link } from './components.js'
import { matchRoute, navigate, useLocation } from './router.js'
import { SessionContext, useSession, type Session } from './session.js'
import { SignIn } from './pages/sign-in.js'
import { ArtifactList } from './pages/review.js'
import { ArtifactPage } from './pages/artifact.js'
import { lazy } from './lazy.js'
import { LinkPage } from './pages/invite.js'

const WORKSPACE_KEY = 'cairn.workspace'

const NAV: Array<{ href: string; label: string; admins?: boolean }> = [
  { href: '/review', label: 'Review' }, { href: '/artifacts', label: 'Artifacts' },
  { href: '/knowledge', label: 'Knowledge' }, { href: '/chat', label: 'Chat' },
  { href: '/voice-notes', label: 'Voice notes' }, { href: '/workflows', label: 'Workflows' },
  { href: '/developer', label: 'Developer' }, { href: '/settings', label: 'Settings', admins: true }
]

export function App() {
  // undefined: asking who is signed in; null: nobody (the sign-in form, over whatever page the address names)
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [workspaceId, setWorkspaceId] = useState<string | null>(() => localStorage.getItem(WORKSPACE_KEY))
  // the links Cairn hands out (an invitation, a password reset) open without a session
  const link = /^\/(invite|reset-password)\/([^/]+)$/.exec(useLocation().path)

  const loadMe = () => {
    setLoadError(null)
    client.me().then(setMe, (err: unknown) => {
      if (isSignedOut(err)) setMe(null)
      else setLoadError(describeError(err))
    })
  }
  useEffect(loadMe, [])

  const workspace = me?.workspaces.find((w) => w.id === workspaceId) ?? me?.workspaces[0]
  const session = useMemo<Session | null>(() => me && workspace
    ? { me, workspace, api: inWorkspace(workspace.id), signedOut: () => setMe(null) }
    : null, [me, workspace])

  if (link) {
    return <LinkPage kind={link[1] as 'invite' | 'reset-password'} token={decodeURIComponent(link[2])}
      onSignedIn={loadMe} />
  }
  if (loadError) {
    return (
      <main class="center">
        <h1>Cairn</h1>
        <ErrorText error={loadError} />
        <button type="button" onClick={loadMe}>Try again</button>
      </main>
    )
  }
  if (me === undefined) return <main class="center"><p>Loading…</p></main>
  if (me === null) return <SignIn onSignedIn={loadMe} />
  if (!session) {
    return (
      <main class="center">
        <h1>No workspace</h1>
        <p>You are not a member of any workspace yet. Ask an owner or admin of your organization to add you.</p>
        <SignOutButton onDone={() => setMe(null)} />
      </main>
    )
  }
  const chooseWorkspace = (id: string) => {
    localStorage.setItem(WORKSPACE_KEY, id)
    setWorkspaceId(id)
  }
  return (
    <SessionContext.Provider value={session}>
      <Layout onWorkspace={chooseWorkspace} onSignedOut={() => setMe(null)} />
    </SessionContext.Provider>
  )
}

function SignOutButton(props: { onDone(): void }) {
  const [error, setError] = useState<string | null>(null)
  const signOut = async () => {
    try {
      await client.signOut()
    } catch (err) {
      // a session that had already ended is signed out all the same
      if (!isSignedOut(err)) return setError(describeError(err))
    }
    props.onDone()
  }
  return (
    <span class="sign-out">
      <button type="button" onClick={signOut} aria-describedby={error ? 'sign-out-error' : undefined}>Sign out</button>
      <ErrorText error={error} id="sign-out-error" />
    </span>
  )
}

function Layout(props: { onWorkspace(id: string): void; onSignedOut(): void }) {
  const { path } = useLocation()
  const { me, workspace } = useSession()
  const admin = me.orgRole !== 'member' || workspace.role !== 'member'
  useEffect(() => {
    if (path === '/' || path === '') navigate('/review', true)
  }, [path])
  return (
    <div class="layout">
      <header class="top">
        <a class="brand" href="/review" onClick={(e) => { e.preventDefault(); navigate('/review') }}>Cairn</a>
        <label class="workspace">
          Workspace
          <select value={workspace.id} onChange={(e) => props.onWorkspace((e.target as HTMLSelectElement).value)}>
            {me.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
          </select>
        </label>
        <Link class="who" href="/settings/account">{me.user.name || me.user.email}</Link>
        <SignOutButton onDone={props.onSignedOut} />
      </header>
      <nav aria-label="Main">
        <ul>
          {NAV.filter((n) => !n.admins || admin).map((n) => (
            <li key={n.href}><Link href={n.href} current={path.startsWith(n.href)}>{n.label}</Link></li>
          ))}
        </ul>
      </nav>
      <main id="main">
        <Page path={path} key={workspace.id} />
      </main>
    </div>
  )
}

// the pages beyond review are loaded when first shown, each its own file in the build
const KnowledgePage = lazy(() => import('./pages/knowledge.js').then((m) => m.KnowledgePage))
const DocumentPage = lazy(() => import('./pages/knowledge-document.js').then((m) => m.DocumentPage))
const ChatPage = lazy(() => import('./pages/chat.js').then((m) => m.ChatPage))
const ChannelsPage = lazy(() => import('./pages/channels.js').then((m) => m.ChannelsPage))
const VoiceNotesPage = lazy(() => import('./pages/voice.js').then((m) => m.VoiceNotesPage))
const VoiceNotePage = lazy(() => import('./pages/voice-note.js').then((m) => m.VoiceNotePage))
const Developer = lazy(() => import('./pages/developer.js').then((m) => m.Developer))
const Settings = lazy(() => import('./pages/settings.js').then((m) => m.Settings))
const Workflows = lazy(() => import('./pages/workflows.js').then((m) => m.Workflows))

/** The console's pages: a path pattern, and what it shows (its groups, decoded, as `params`, and the whole path). */
const ROUTES: Array<{ pattern: RegExp; page: (params: string[], path: string) => VNode }> = [
  { pattern: /^\/(review)?$/, page: () => <ArtifactList mode="review" /> },
  { pattern: /^\/artifacts$/, page: () => <ArtifactList mode="all" /> },
  { pattern: /^\/artifacts\/([^/]+)$/, page: ([id]) => <ArtifactPage id={id} key={id} /> },
  { pattern: /^\/knowledge$/, page: () => <KnowledgePage /> },
  { pattern: /^\/knowledge\/documents\/([^/]+)$/, page: ([id]) => <DocumentPage id={id} key={id} /> },
  { pattern: /^\/chat$/, page: () => <ChatPage /> },
  { pattern: /^\/chat\/channels(?:\/([^/]+))?$/, page: ([id]) => <ChannelsPage id={id || undefined} /> },
  { pattern: /^\/voice-notes$/, page: () => <VoiceNotesPage /> },
  { pattern: /^\/voice-notes\/([^/]+)$/, page: ([id]) => <VoiceNotePage id={id} key={id} /> },
  { pattern: /^\/developer(?:\/.*)?$/, page: (_params, path) => <Developer path={path} /> },
  { pattern: /^\/settings(?:\/.*)?$/, page: (_params, path) => <Settings path={path} /> },
  { pattern: /^\/workflows(?:\/.*)?$/, page: (_params, path) => <Workflows path={path} /> }
]

function Page(props: { path: string }) {
  const path = props.path
  const found = matchRoute(ROUTES, path)
  if (found) return found.route.page(found.params, path)
  return (
    <section>
      <h1>Page not found</h1>
      <p>Nothing is at {path}. <Link href="/review">Go to the queue</Link>.</p>
    </section>
  )
}
