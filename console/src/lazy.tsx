import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ErrorText } from './components.js'

/**
 * A page whose code is loaded when it is first shown (its own file in the build), so the first page stays small.
 * A failed load (the network, a new version deployed meanwhile) says so and offers to try again.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined
  let pending: Promise<ComponentType<P>> | undefined
  return function LazyPage(props: P) {
    const [, setLoaded] = useState(0)
    const [error, setError] = useState<string | null>(null)
    const [attempt, setAttempt] = useState(0)
    useEffect(() => {
      if (loaded) return
      let live = true
      pending ??= load()
      pending.then((component) => {
        loaded = component
        if (live) setLoaded((n) => n + 1)
      }, (err: unknown) => {
        pending = undefined
        if (live) setError(`This page could not be loaded (${err instanceof Error ? err.message : String(err)}).`)
      })
      return () => { live = false }
    }, [attempt])
    if (loaded) {
      const Page = loaded
      return <Page {...props} />
    }
    if (error) {
      return (
        <section>
          <ErrorText error={error} />
          <button type="button" onClick={() => { setError(null); setAttempt((n) => n + 1) }}>Try again</button>
        </section>
      )
    }
    return <p>Loading…</p>
  }
}
