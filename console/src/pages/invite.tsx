import { useState } from 'preact/hooks'
import { client, describeError } from '../api.js'
import { ErrorText } from '../components.js'
import { navigate } from '../router.js'
import './developer.css'

const GONE = 'This link does not work any more: it was used, revoked or has expired. Ask an owner or admin of ' +
  'your organization for a new one.'

/**
 * The pages behind the links Cairn hands out: `/invite/<token>`, where an invited person chooses their name and
 * password and is signed in, and `/reset-password/<token>`, where a person chooses a new password.
 */
export function LinkPage(props: { kind: 'invite' | 'reset-password'; token: string; onSignedIn(): void }) {
  const invite = props.kind === 'invite'
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')
  const [again, setAgain] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [reset, setReset] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    if (password.length < 8) return setError('The password needs at least 8 characters.')
    if (password !== again) return setError('The two passwords differ: type the same one twice.')
    setBusy(true)
    setError(null)
    try {
      if (invite) {
        // the answer sets the console's session cookie: the person is signed in by joining
        const body = { token: props.token, password, cookie: true, ...(name.trim() ? { name: name.trim() } : {}) }
        await client.call('/api/v2/invitations/accept', 'post', { body })
        navigate('/review', true)
        props.onSignedIn()
      } else {
        await client.call('/api/v2/auth/password-reset', 'post',
          { body: { token: props.token, newPassword: password } })
        setReset(true)
      }
    } catch (err) {
      setError(err instanceof Error && 'statusCode' in err && err.statusCode === 404 ? GONE : describeError(err))
    } finally {
      setBusy(false)
    }
  }

  if (reset) {
    return (
      <main class="center sign-in">
        <h1>Password changed</h1>
        <p role="status">Your new password is set, and every session that was open has been signed out.</p>
        <button type="button" onClick={() => { navigate('/review', true); props.onSignedIn() }}>Sign in</button>
      </main>
    )
  }
  return (
    <main class="center sign-in">
      <h1>{invite ? 'Join Cairn' : 'Choose a new password'}</h1>
      <p>{invite ? 'You were invited to an organization on Cairn. Choose how your name is shown and a password; ' +
        'you are signed in right after.' : 'Choose a new password for your Cairn account.'}</p>
      <form onSubmit={submit} aria-describedby={error ? 'link-error' : undefined}>
        {invite && (
          <label>
            Your name
            <input type="text" name="name" autocomplete="name" maxLength={200} value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
        )}
        <label>
          New password
          <input type="password" autocomplete="new-password" required minLength={8} value={password}
            aria-describedby="link-password-hint" onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </label>
        <p class="hint" id="link-password-hint">At least 8 characters.</p>
        <label>
          Repeat the password
          <input type="password" autocomplete="new-password" required value={again}
            onInput={(e) => setAgain((e.target as HTMLInputElement).value)} />
        </label>
        <ErrorText error={error} id="link-error" />
        <button type="submit" disabled={busy}>{invite ? 'Join' : 'Set new password'}</button>
      </form>
    </main>
  )
}
