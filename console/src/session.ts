import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { CairnClient } from '../../clients/typescript/src/client.js'
import type { Me } from './api.js'

export interface Session {
  me: Me
  /** the workspace chosen in the `Workspace` select */
  workspace: Me['workspaces'][number]
  /** the client for that workspace */
  api: CairnClient
  /** the session is over (a 401): back to sign-in, the page kept */
  signedOut(): void
}

export const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside a signed-in page')
  return session
}
