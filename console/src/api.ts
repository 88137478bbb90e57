import { CairnClient } from '../../clients/typescript/src/client.js'
import { CairnError } from '../../clients/typescript/src/errors.js'

export type { Artifact, ArtifactListItem, ArtifactComment, ChainLink, Me, KnowledgeDocument, DocumentWithChunks,
  SearchResult, ChatEvent, ChatCitation, ChatStream, VoiceNote, VoiceNoteDetail, Channel,
  ChannelMessage } from '../../clients/typescript/src/client.js'
export { CairnError }

/**
 * The console's only way to the API: the project's TypeScript client, signed in by the browser's HttpOnly cookie
 * (never a token a script could read), sending the CSRF header Cairn asks of cookie requests.
 */
export const client = new CairnClient({ baseUrl: location.origin, browserSession: true, maxRetries: 2,
  maxDelayMs: 10_000 })

/** The client for one workspace. */
export function inWorkspace(workspaceId: string): CairnClient {
  return client.with({ workspaceId })
}

/** An error of the API in words for the person: its message, with what to do for the common cases. */
export function describeError(err: unknown): string {
  if (err instanceof CairnError) {
    if (err.statusCode === 0) return 'Cairn could not be reached. Check your connection and try again.'
    if (err.statusCode === 429) {
      return `Too many requests: try again${err.retryAfter ? ` in ${Math.ceil(err.retryAfter)} s` : ' shortly'}.`
    }
    return err.message
  }
  return err instanceof Error ? err.message : String(err)
}

/** Whether an error means the session is over (expired, ended elsewhere): the console signs in again. */
export function isSignedOut(err: unknown): boolean {
  return err instanceof CairnError && err.statusCode === 401
}
