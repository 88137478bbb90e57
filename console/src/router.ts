import { useEffect, useState } from 'preact/hooks'

/** The console's routes live in the address bar (history API); the service answers every one with the page. */
export function currentPath(): string {
  return location.pathname + location.search
}

const listeners = new Set<() => void>()
window.addEventListener('popstate', () => { for (const l of listeners) l() })

export function navigate(to: string, replace = false): void {
  if (to === currentPath()) return
  if (replace) history.replaceState(null, '', to)
  else history.pushState(null, '', to)
  for (const l of listeners) l()
  window.scrollTo(0, 0)
}

/** The current path and query, re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = () => setTick((n) => n + 1)
    listeners.add(l)
    return () => { listeners.delete(l) }
  }, [])
  return { path: location.pathname, query: new URLSearchParams(location.search) }
}

/** A click on an in-console link: navigate without a reload (modified clicks keep the browser's behaviour). */
export function onLinkClick(event: MouseEvent): void {
  const a = event.currentTarget as HTMLAnchorElement
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey ||
    event.altKey || a.target) return
  event.preventDefault()
  navigate(a.getAttribute('href') ?? '/')
}

/**
 * The first route whose pattern matches the path, with its groups decoded (a group that took no part is ''; one
 * that is not valid percent-encoding is kept as written rather than failing the page); undefined when none does.
 */
export function matchRoute<R extends { pattern: RegExp }>(routes: R[], path: string):
{ route: R; params: string[] } | undefined {
  for (const route of routes) {
    const m = route.pattern.exec(path)
    if (!m) continue
    return { route, params: m.slice(1).map((p) => {
      if (p === undefined) return ''
      try {
        return decodeURIComponent(p)
      } catch {
        return p
      }
    }) }
  }
  return undefined
}

/** The current address with some query parameters changed (an empty or undefined value removes one). */
export function withQuery(changes: Record<string, string | number | undefined>): string {
  const next = new URLSearchParams(location.search)
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') next.delete(name)
    else next.set(name, String(value))
  }
  const qs = next.toString()
  return `${location.pathname}${qs ? `?${qs}` : ''}`
}
