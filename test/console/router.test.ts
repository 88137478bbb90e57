// The console's router without a browser: the address bar is a small stand-in for the window's location and
// History API (only what router.ts uses), set up before the module is loaded.
import t from 'tap'

interface Entry { path: string }
const entries: Entry[] = [{ path: '/review' }]
let at = 0
const calls: string[] = []
const popListeners: Array<() => void> = []

function setPath(path: string) {
  const url = new URL(path, 'http://cairn.test')
  location.pathname = url.pathname
  location.search = url.search
}
const location = { pathname: '/review', search: '' }
const history = {
  pushState(_state: unknown, _title: string, to: string) {
    entries.splice(at + 1, entries.length, { path: to })
    at = entries.length - 1
    calls.push(`push ${to}`)
    setPath(to)
  },
  replaceState(_state: unknown, _title: string, to: string) {
    entries[at] = { path: to }
    calls.push(`replace ${to}`)
    setPath(to)
  }
}
const g = globalThis as Record<string, unknown>
g.location = location
g.history = history
g.window = {
  addEventListener(name: string, listener: () => void) { if (name === 'popstate') popListeners.push(listener) },
  scrollTo() { calls.push('scroll') }
}

/**
 * router.ts imports Preact, whose types bring the DOM library into whatever program reads them; the server's
 * type check must not see it, so the module is loaded by a path the checker does not follow, typed here.
 */
interface Router {
  currentPath(): string
  navigate(to: string, replace?: boolean): void
  withQuery(changes: Record<string, string | number | undefined>): string
  onLinkClick(event: unknown): void
  matchRoute<R extends { pattern: RegExp }>(routes: R[], path: string): { route: R; params: string[] } | undefined
}
const ROUTER = '../../console/src/router.js'
const router = await import(ROUTER) as Router

/** each test starts at /review with one entry */
function reset() {
  calls.length = 0
  entries.splice(0, entries.length, { path: '/review' })
  at = 0
  setPath('/review')
}

t.test('the current path includes the query', async (t) => {
  reset()
  setPath('/artifacts?type=task_plan&page=2')
  t.equal(router.currentPath(), '/artifacts?type=task_plan&page=2')
})

t.test('navigate pushes an entry and scrolls to the top; replace replaces; the same address does nothing',
  async (t) => {
    reset()
    router.navigate('/artifacts/a1')
    t.same(calls, ['push /artifacts/a1', 'scroll'])
    t.equal(router.currentPath(), '/artifacts/a1')
    t.equal(entries.length, 2)
    calls.length = 0
    router.navigate('/artifacts/a1')
    t.same(calls, [], 'already there')
    router.navigate('/review', true)
    t.same(calls, ['replace /review', 'scroll'])
    t.equal(entries.length, 2, 'no new entry')
    t.equal(popListeners.length, 1, 'the back button is listened to once')
  })

t.test('withQuery changes some parameters and keeps the rest', async (t) => {
  reset()
  setPath('/review?type=task_plan&page=3')
  t.equal(router.withQuery({ page: 1 }), '/review?type=task_plan&page=1')
  t.equal(router.withQuery({ status: 'draft' }), '/review?type=task_plan&page=3&status=draft')
  t.equal(router.withQuery({ type: '', page: undefined }), '/review', 'empty and undefined remove')
  t.equal(router.withQuery({ search: 'a b&c' }), '/review?type=task_plan&page=3&search=a+b%26c', 'values encoded')
  t.equal(location.search, '?type=task_plan&page=3', 'the address itself is left alone')
})

function click(href: string, init: Partial<{ button: number; metaKey: boolean; ctrlKey: boolean; shiftKey: boolean;
  altKey: boolean; defaultPrevented: boolean; target: string }> = {}) {
  let prevented = false
  const anchor = { target: init.target ?? '', getAttribute: (name: string) => name === 'href' ? href : null }
  const event = { button: 0, metaKey: false, ctrlKey: false, shiftKey: false, altKey: false, defaultPrevented: false,
    ...init, currentTarget: anchor, preventDefault() { prevented = true } }
  router.onLinkClick(event)
  return prevented
}

t.test('a plain click on a link navigates in place; other clicks keep the browser\'s behaviour', async (t) => {
  reset()
  t.ok(click('/knowledge'), 'the page is not reloaded')
  t.equal(router.currentPath(), '/knowledge')
  for (const init of [{ ctrlKey: true }, { metaKey: true }, { shiftKey: true }, { altKey: true }, { button: 1 },
    { target: '_blank' }, { defaultPrevented: true }]) {
    calls.length = 0
    t.notOk(click('/settings', init), `left to the browser: ${JSON.stringify(init)}`)
    t.same(calls, [])
  }
  t.equal(router.currentPath(), '/knowledge')
})

t.test('a route is the first pattern that matches, its parts decoded', async (t) => {
  const routes = [{ name: 'queue', pattern: /^\/(review)?$/ }, { name: 'artifact', pattern: /^\/artifacts\/([^/]+)$/ },
    { name: 'channels', pattern: /^\/chat\/channels(?:\/([^/]+))?$/ }]
  const match = (path: string) => {
    const m = router.matchRoute(routes, path)
    return m && [m.route.name, ...m.params]
  }
  t.same(match('/'), ['queue', ''], 'a group that took no part is empty')
  t.same(match('/review'), ['queue', 'review'])
  t.same(match('/artifacts/a%20b%2Fc'), ['artifact', 'a b/c'])
  t.same(match('/artifacts/%E0%A4%A'), ['artifact', '%E0%A4%A'], 'malformed encoding kept, not thrown')
  t.same(match('/chat/channels'), ['channels', ''])
  t.same(match('/chat/channels/c1'), ['channels', 'c1'])
  t.equal(match('/artifacts/a/b'), undefined)
  t.equal(match('/nowhere'), undefined)
})
