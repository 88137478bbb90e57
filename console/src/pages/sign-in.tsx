import { useState } from 'preact/hooks'
import { client, describeError } from '../api.js'
import { ErrorText } from '../components.js'

/** Email and password; the session becomes the browser's HttpOnly cookie. The page asked for stays in the address. */
export function SignIn(props: { onSignedIn(): void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await client.signIn(email, password)
      props.onSignedIn()
    } catch (err) {
      setError(describeError(err))
      setBusy(false)
    }
  }
  return (
    <main class="center sign-in">
      <h1>Sign in to Cairn</h1>
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </label>
        <ErrorText error={error} id="sign-in-error" />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  )
}
