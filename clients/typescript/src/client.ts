import type { paths } from './generated/openapi.js'
import { Transport, type TransportOptions, type RequestOptions } from './http.js'
import { CairnError } from './errors.js'
import { readSse } from './sse.js'

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'
export type Path = keyof paths
/** The OpenAPI operation of a path and method. */
export type Operation<P extends Path, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never
export type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } } ? B | undefined : undefined
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never
export type PathParams<O> = O extends { parameters: { path: infer P } } ? P : never
export type Success<O> = O extends { responses: infer R }
  ? R[Extract<keyof R, 200 | 201 | 202>] extends { content: { 'application/json': infer T } } ? T : unknown
  : never

type Data<P extends Path, M extends Method> = Success<Operation<P, M>> extends { data: infer D } ? D : never

export type Artifact = Data<'/api/v2/artifacts/{id}', 'get'>
export type ArtifactListItem = Data<'/api/v2/artifacts', 'get'> extends Array<infer T> ? T : never
export type ChainLink = Data<'/api/v2/artifacts/{id}/chain', 'get'> extends Array<infer T> ? T : never
export type CreateArtifactInput = NonNullable<JsonBody<Operation<'/api/v2/artifacts', 'post'>>>
export type UpdateArtifactInput = NonNullable<JsonBody<Operation<'/api/v2/artifacts/{id}', 'patch'>>>
export type SupersedeArtifactInput = NonNullable<JsonBody<Operation<'/api/v2/artifacts/{id}/supersede', 'post'>>>
export type ArtifactStatus = NonNullable<JsonBody<Operation<'/api/v2/artifacts/{id}/status', 'post'>>>['status']
export type ListArtifactsQuery = NonNullable<QueryOf<Operation<'/api/v2/artifacts', 'get'>>>
export type SearchInput = NonNullable<JsonBody<Operation<'/api/knowledge/search', 'post'>>>
export type SearchResult = Success<Operation<'/api/knowledge/search', 'post'>>
export type KnowledgeDocument = Success<Operation<'/api/knowledge/documents',
  'get'>> extends { documents: Array<infer T> } ? T : never
export type ListDocumentsQuery = NonNullable<QueryOf<Operation<'/api/knowledge/documents', 'get'>>>
export type DocumentWithChunks = Success<Operation<'/api/knowledge/document/{id}', 'get'>>
export type UploadResult = Success<Operation<'/api/knowledge/upload', 'post'>>
export type LogEntry = Data<'/api/v2/developer/logs', 'get'> extends Array<infer T> ? T : never
export type LogsQuery = Omit<NonNullable<QueryOf<Operation<'/api/v2/developer/logs', 'get'>>>, 'cursor'>
export type ActivityInput = NonNullable<JsonBody<Operation<'/api/v2/activity/log', 'post'>>>
export type ChatInput = NonNullable<JsonBody<Operation<'/api/v2/chat/stream', 'post'>>>
/** A passage of the knowledge base an answer was made from. */
export type ChatCitation = Success<Operation<'/api/v2/chat', 'post'>> extends { citations: Array<infer C> } ? C : never
export type Me = Data<'/api/v2/auth/me', 'get'>
/** An API key as listed: never its value */
export type ApiKeyInfo = Data<'/api/v2/api-keys/{id}', 'get'>
/** A new (or rotated) API key: `key` is its value, shown this once */
export type NewApiKey = Data<'/api/v2/api-keys', 'post'>
export type CreateApiKeyInput = NonNullable<JsonBody<Operation<'/api/v2/api-keys', 'post'>>>
export type ApiKeyScope = CreateApiKeyInput['scopes'][number]
export type Workspace = Data<'/api/v2/workspaces', 'get'> extends Array<infer T> ? T : never
export type NewWorkspace = Data<'/api/v2/workspaces', 'post'>
export type WorkspaceMember = Data<'/api/v2/workspaces/{id}/members', 'get'> extends Array<infer T> ? T : never
export type ArtifactComment = NonNullable<Artifact['comments']> extends Array<infer T> ? T : never
export type VoiceNote = Success<Operation<'/api/v2/voice-notes', 'get'>> extends { voiceNotes: Array<infer T> } ? T
  : never
/** A voice note read alone: with its transcript once completed */
export type VoiceNoteDetail = Success<Operation<'/api/v2/voice-notes/{id}', 'get'>> extends { voiceNote: infer T } ? T
  : never
export type VoiceNoteStatus = VoiceNote['status']
export type ListVoiceNotesQuery = NonNullable<QueryOf<Operation<'/api/v2/voice-notes', 'get'>>>
export type CreateVoiceNoteInput = NonNullable<JsonBody<Operation<'/api/v2/voice-notes', 'post'>>>
export type VoiceNoteTranscript = Success<Operation<'/api/v2/voice-notes/{id}/transcript', 'get'>>
/** Stored audio: `audioUrl` is what a voice note is created with */
export type UploadedAudio = Data<'/api/v2/voice-notes/audio', 'post'>
export type Channel = Data<'/api/v2/channels', 'get'> extends Array<infer T> ? T : never
export type CreateChannelInput = NonNullable<JsonBody<Operation<'/api/v2/channels', 'post'>>>
export type ChannelMessage = Data<'/api/v2/messages', 'post'>
export type PostMessageInput = NonNullable<JsonBody<Operation<'/api/v2/messages', 'post'>>>

/** The events of `POST /api/v2/chat/stream` (docs/api/assistant.md#chat). */
export type ChatEvent =
  | { type: 'text_delta'; content: string }
  | { type: 'done'; conversationId: string; reply: string; model?: string; citations?: ChatCitation[] }
  | { type: 'error'; message: string }

/** A chat stream: iterate it with `for await`; `cancel()` (or leaving the loop) ends it and the model call. */
export interface ChatStream extends AsyncIterable<ChatEvent> {
  cancel(): void
}

/**
 * An event of the workspace event stream (`GET /api/v2/events/stream`, docs/api/events.md): `type` is its name
 * (`artifact.status_changed`, `document.indexed`, …, or `reset` when the events missed are no longer kept), `id` its
 * position in the stream, `data` its fields (`id` of the resource, `workspace_id`, `at`, …).
 */
export interface WorkspaceEvent {
  type: string
  id: string
  data: { id?: string; workspace_id: string; at: string; [field: string]: unknown }
}

/** The workspace's events, across reconnects: iterate it with `for await`; `close()` (or leaving the loop) ends it. */
export interface WorkspaceEventStream extends AsyncIterable<WorkspaceEvent> {
  /** the id of the last event received: give it as `lastEventId` to a later stream to resume there */
  readonly lastEventId: string | undefined
  close(): void
}

export interface WorkspaceEventOptions {
  /** the workspace (the client's by default) */
  workspaceId?: string
  /** resume after this event (received earlier): the events since then come first, or a `reset` event */
  lastEventId?: string
  signal?: AbortSignal
  /** the wait before reconnecting after the connection ends or fails (default 1000 ms) */
  retryMs?: number
}

/** A file for the knowledge base: a path on disk, or bytes with a name. */
export type UploadSource = { path: string; fileName?: string } | { data: Uint8Array | Blob | string; fileName: string }

export interface UploadOptions {
  category?: string
  tags?: string[]
  scope?: 'organization' | 'workspace' | 'personal'
  workspaceId?: string
  idempotencyKey?: string
  signal?: AbortSignal
  /** how much of the file has been sent, in a browser (see RequestOptions.onUploadProgress) */
  onProgress?: (sent: number, total: number) => void
}

export interface WaitOptions {
  /** give up after this long (default 300 000 ms); the artifact is then returned with `changed: false` */
  timeoutMs?: number
  signal?: AbortSignal
}

export type CairnClientOptions = TransportOptions

const DECIDED = new Set(['approved', 'rejected', 'superseded'])
const enc = encodeURIComponent

async function fileBlob(source: UploadSource): Promise<{ blob: Blob; fileName: string }> {
  if ('path' in source) {
    const { readFile } = await import('node:fs/promises')
    const { basename } = await import('node:path')
    return { blob: new Blob([await readFile(source.path)]), fileName: source.fileName ?? basename(source.path) }
  }
  const data = source.data
  return { blob: data instanceof Blob ? data : new Blob([data as Uint8Array<ArrayBuffer> | string]),
    fileName: source.fileName }
}

/**
 * A Cairn API client. Every call retries on 429 and 503 (honouring Retry-After) and, when harmless, on
 * network errors; every POST carries an Idempotency-Key that its retries reuse; failures throw CairnError.
 */
export class CairnClient {
  readonly transport: Transport

  constructor(options: CairnClientOptions) {
    this.transport = new Transport(options)
  }

  /** A client with another credential or workspace, sharing the rest of the options. */
  with(options: Partial<CairnClientOptions>): CairnClient {
    return new CairnClient({ ...this.transport.options, ...options })
  }

  /**
   * A client signed in with email and password: `await CairnClient.login({ baseUrl, email, password })`. Its token
   * is a session (`signOut()` ends it); scripts that run unattended are better served by an API key.
   */
  static async login(options: Omit<CairnClientOptions, 'token'> & { email: string; password: string }):
  Promise<CairnClient> {
    const { email, password, ...rest } = options
    const { token } = await new CairnClient(rest).login(email, password)
    return new CairnClient({ ...rest, token })
  }

  /** Any route of the OpenAPI document, typed by it: `call('/api/v2/artifacts/{id}', 'get', { path: { id } })`. */
  async call<P extends Path, M extends Method & keyof paths[P]>(path: P, method: M, options: {
    path?: PathParams<Operation<P, M>>
    query?: QueryOf<Operation<P, M>>
    body?: JsonBody<Operation<P, M>>
  } & Pick<RequestOptions, 'headers' | 'signal' | 'idempotencyKey'> = {}): Promise<Success<Operation<P, M>>> {
    const params = (options.path ?? {}) as Record<string, string>
    const url = String(path).replace(/\{(\w+)\}/g, (_m, name: string) => enc(String(params[name])))
    return this.transport.json(method.toUpperCase(), url, {
      query: options.query as RequestOptions['query'], json: options.body, headers: options.headers,
      signal: options.signal, idempotencyKey: options.idempotencyKey
    })
  }

  // accounts

  /** A session token for email and password (`POST /api/v2/auth/login`): use it as `token`. */
  async login(email: string, password: string): Promise<{ token: string; expiresAt: string }> {
    const data = (await this.call('/api/v2/auth/login', 'post', { body: { email, password } })).data
    return { token: data.token!, expiresAt: data.expiresAt }
  }

  /**
   * Signs a browser in: the session token becomes the page's HttpOnly cookie, which scripts cannot read (use a
   * client made with `browserSession: true`). Resolves with when the session expires.
   */
  async signIn(email: string, password: string): Promise<{ expiresAt: string }> {
    const data = (await this.call('/api/v2/auth/login', 'post', { body: { email, password, cookie: true } })).data
    return { expiresAt: data.expiresAt }
  }

  /** Ends this client's session (its token, or the browser's cookie) for good. */
  async signOut(): Promise<void> {
    await this.call('/api/v2/auth/logout', 'post')
  }

  /** The caller, their organization role and their workspaces. */
  async me(): Promise<Me> {
    return (await this.call('/api/v2/auth/me', 'get')).data
  }

  // workspaces and API keys (a person's session: API keys cannot manage keys)

  /** The workspaces the caller belongs to, with their role in each. */
  async listWorkspaces(): Promise<Workspace[]> {
    return (await this.call('/api/v2/workspaces', 'get')).data
  }

  /** A new workspace of the caller's organization, the caller its owner. */
  async createWorkspace(name: string): Promise<NewWorkspace> {
    return (await this.call('/api/v2/workspaces', 'post', { body: { name } })).data
  }

  async workspaceMembers(workspaceId: string): Promise<WorkspaceMember[]> {
    return (await this.call('/api/v2/workspaces/{id}/members', 'get', { path: { id: workspaceId } })).data
  }

  /**
   * A new API key with these scopes; with `workspaceId` it is bound to that workspace (it needs no workspace
   * header, and uploads go there by default). The answer's `key` is shown this once: keep it.
   */
  async createApiKey(input: CreateApiKeyInput): Promise<NewApiKey> {
    return (await this.call('/api/v2/api-keys', 'post', { body: input })).data
  }

  /** The caller's keys (revoked ones with `revoked_at`), without their values. */
  async listApiKeys(): Promise<ApiKeyInfo[]> {
    return (await this.call('/api/v2/api-keys', 'get')).data
  }

  async getApiKey(id: string): Promise<ApiKeyInfo> {
    return (await this.call('/api/v2/api-keys/{id}', 'get', { path: { id } })).data
  }

  /** A new value for the key, same scopes; the old value stops working at once. */
  async rotateApiKey(id: string): Promise<NewApiKey> {
    return (await this.call('/api/v2/api-keys/{id}/rotate', 'post', { path: { id } })).data
  }

  /** The key stops working at once. */
  async revokeApiKey(id: string): Promise<void> {
    await this.call('/api/v2/api-keys/{id}', 'delete', { path: { id } })
  }

  // knowledge base

  /**
   * Uploads a file. Without `scope` it goes to the workspace (the key's, `workspaceId`, or the client's), else to
   * the organization.
   */
  async uploadDocument(source: UploadSource, options: UploadOptions = {}): Promise<UploadResult> {
    const { blob, fileName } = await fileBlob(source)
    const form = new FormData()
    if (options.category) form.set('category', options.category)
    if (options.tags) form.set('tags', JSON.stringify(options.tags))
    if (options.scope) form.set('scope', options.scope)
    if (options.workspaceId) form.set('workspaceId', options.workspaceId)
    form.set('file', blob, fileName)
    return this.transport.json('POST', '/api/knowledge/upload',
      { form, idempotencyKey: options.idempotencyKey, signal: options.signal, onUploadProgress: options.onProgress })
  }

  searchKnowledge(input: SearchInput, signal?: AbortSignal): Promise<SearchResult> {
    return this.call('/api/knowledge/search', 'post', { body: input, signal })
  }

  getDocument(id: string, query: { chunkOffset?: number; chunkLimit?: number } = {}): Promise<DocumentWithChunks> {
    return this.call('/api/knowledge/document/{id}', 'get', { path: { id }, query: query as never })
  }

  /** Every document the caller can read, page by page. */
  async* documents(query: Omit<ListDocumentsQuery, 'offset'> = {}): AsyncGenerator<KnowledgeDocument> {
    const limit = query.limit ?? 100
    for (let offset = 0; ;) {
      const page = await this.call('/api/knowledge/documents', 'get', { query: { ...query, limit, offset } as never })
      yield * page.documents
      offset += page.documents.length
      if (page.documents.length < limit || offset >= page.count) return
    }
  }

  // voice notes

  /** Stores a recording (audio, at most 100 MB); create a voice note with its `audioUrl` and `mimeType`. */
  async uploadAudio(source: UploadSource,
    options: Pick<UploadOptions, 'idempotencyKey' | 'signal' | 'onProgress'> = {}): Promise<UploadedAudio> {
    const { blob, fileName } = await fileBlob(source)
    const form = new FormData()
    form.set('file', blob, fileName)
    const res = await this.transport.json<{ data: UploadedAudio }>('POST', '/api/v2/voice-notes/audio',
      { form, idempotencyKey: options.idempotencyKey, signal: options.signal, onUploadProgress: options.onProgress })
    return res.data
  }

  /** A voice note for an audio URL (uploaded with uploadAudio, or a public http(s) URL), status `created`. */
  async createVoiceNote(input: CreateVoiceNoteInput): Promise<VoiceNote> {
    return (await this.call('/api/v2/voice-notes', 'post', { body: input })).voiceNote
  }

  /** One page of the caller's voice notes, newest first, with the total matching the filters. */
  async listVoiceNotes(query: ListVoiceNotesQuery = {}) {
    const page = await this.call('/api/v2/voice-notes', 'get', { query })
    return { voiceNotes: page.voiceNotes, total: page.total }
  }

  /** Every voice note matching the filters, newest first, page by page. */
  async* voiceNotes(query: Omit<ListVoiceNotesQuery, 'offset'> = {}): AsyncGenerator<VoiceNote> {
    const limit = query.limit ?? 100
    for (let offset = 0; ;) {
      const page = await this.call('/api/v2/voice-notes', 'get', { query: { ...query, limit, offset } })
      yield * page.voiceNotes
      offset += page.voiceNotes.length
      if (page.voiceNotes.length < limit || offset >= page.total) return
    }
  }

  async getVoiceNote(id: string): Promise<VoiceNoteDetail> {
    return (await this.call('/api/v2/voice-notes/{id}', 'get', { path: { id } })).voiceNote
  }

  /** Starts (or, after a failure, retries) the transcription in the background; 409 while one runs or once done. */
  async transcribeVoiceNote(id: string): Promise<void> {
    await this.call('/api/v2/voice-notes/{id}/transcribe', 'post', { path: { id } })
  }

  /** A failed transcription tried again (the same call as transcribeVoiceNote, named for the case). */
  async retryVoiceNote(id: string): Promise<void> {
    await this.transcribeVoiceNote(id)
  }

  /** The transcript with its timed segments; 404 until the note is completed. */
  async voiceNoteTranscript(id: string): Promise<VoiceNoteTranscript> {
    return this.call('/api/v2/voice-notes/{id}/transcript', 'get', { path: { id } })
  }

  // channels

  /** The workspace's channels the caller can read. */
  async listChannels(): Promise<Channel[]> {
    return (await this.call('/api/v2/channels', 'get', {})).data
  }

  async createChannel(input: CreateChannelInput): Promise<Channel> {
    return (await this.call('/api/v2/channels', 'post', { body: input })).data
  }

  /** A channel's messages, newest first; `before` (an ISO time) pages back. */
  async channelMessages(channelId: string, query: { limit?: number; before?: string } = {}):
  Promise<ChannelMessage[]> {
    return (await this.call('/api/v2/channels/{id}/messages', 'get', { path: { id: channelId },
      query: query as never })).data
  }

  async postMessage(input: PostMessageInput): Promise<ChannelMessage> {
    return (await this.call('/api/v2/messages', 'post', { body: input })).data
  }

  // artifacts

  async createArtifact(input: CreateArtifactInput): Promise<Artifact> {
    return (await this.call('/api/v2/artifacts', 'post', { body: input })).data as Artifact
  }

  async getArtifact(id: string): Promise<Artifact> {
    return (await this.call('/api/v2/artifacts/{id}', 'get', { path: { id } })).data
  }

  async updateArtifact(id: string, input: UpdateArtifactInput): Promise<Artifact> {
    return (await this.call('/api/v2/artifacts/{id}', 'patch', { path: { id }, body: input })).data as Artifact
  }

  async deleteArtifact(id: string): Promise<void> {
    await this.call('/api/v2/artifacts/{id}', 'delete', { path: { id } })
  }

  async setArtifactStatus(id: string, status: ArtifactStatus) {
    return (await this.call('/api/v2/artifacts/{id}/status', 'post', { path: { id }, body: { status } })).data
  }

  async commentOnArtifact(id: string, content: string, position?: Record<string, unknown>) {
    return (await this.call('/api/v2/artifacts/{id}/comments', 'post',
      { path: { id }, body: { content, ...(position ? { position } : {}) } })).data
  }

  async supersedeArtifact(id: string, input: SupersedeArtifactInput = {}): Promise<Artifact> {
    return (await this.call('/api/v2/artifacts/{id}/supersede', 'post', { path: { id }, body: input })).data as Artifact
  }

  async artifactChain(id: string): Promise<ChainLink[]> {
    return (await this.call('/api/v2/artifacts/{id}/chain', 'get', { path: { id } })).data
  }

  async listArtifacts(query: ListArtifactsQuery = {}) {
    const page = await this.call('/api/v2/artifacts', 'get', { query })
    return { artifacts: page.data, meta: page.meta }
  }

  /** Every artifact matching the filters, newest first, page by page. */
  async* artifacts(query: Omit<ListArtifactsQuery, 'offset'> = {}): AsyncGenerator<ArtifactListItem> {
    const limit = query.limit ?? 100
    for (let offset = 0; ;) {
      const page = await this.call('/api/v2/artifacts', 'get', { query: { ...query, limit, offset } })
      yield * page.data
      offset += page.data.length
      if (page.data.length < limit || offset >= page.meta.count) return
    }
  }

  /**
   * Waits until a person (or a permitted key) approves, rejects or supersedes the artifact. It asks the
   * tool server's `wait_for_review` (docs/mcp.md#tools), which is woken by the change itself: no polling.
   */
  async waitForReview(id: string, options: WaitOptions = {}): Promise<Artifact & { changed: boolean }> {
    const deadline = Date.now() + (options.timeoutMs ?? 300_000)
    for (;;) {
      const left = Math.ceil((deadline - Date.now()) / 1000)
      const seconds = Math.max(1, Math.min(50, left))
      const result = await this.mcpTool('wait_for_review', { id, timeoutSeconds: seconds },
        options.signal) as Artifact & { changed: boolean }
      if (result.changed || DECIDED.has(result.status) || Date.now() >= deadline) return result
    }
  }

  /** One MCP tool call over `/api/mcp` (stateless Streamable HTTP), answered as the tool's structured content. */
  async mcpTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const res = await this.transport.send('POST', '/api/mcp', {
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      signal, stream: true
    })
    let message: { result?: { isError?: boolean; structuredContent?: Record<string, unknown>;
      content?: Array<{ text?: string }> }; error?: { message: string } } | undefined
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body) {
      for await (const event of readSse(res.body)) {
        const parsed = JSON.parse(event.data) as typeof message & { id?: unknown }
        if (parsed && parsed.id === 1) { message = parsed; break }
      }
    } else {
      message = await res.json() as typeof message
    }
    if (!message) throw new CairnError(0, 'MCP_NO_ANSWER', `The tool server gave no answer to ${name}`)
    if (message.error) throw new CairnError(400, 'MCP_ERROR', message.error.message, message.error)
    const result = message.result ?? {}
    const s = result.structuredContent ?? {}
    if (result.isError) {
      throw new CairnError(Number(s.statusCode ?? 0), String(s.code ?? 'TOOL_ERROR'),
        String(s.message ?? result.content?.[0]?.text ?? 'Tool error'), s,
        typeof s.retryAfter === 'number' ? s.retryAfter : undefined)
    }
    return s
  }

  // developer data

  /** Developer-log entries, newest first, following `nextCursor` to the last page. */
  async* logs(query: LogsQuery = {}): AsyncGenerator<LogEntry> {
    let cursor: string | undefined
    do {
      const page = await this.call('/api/v2/developer/logs', 'get',
        { query: { ...query, ...(cursor ? { cursor } : {}) } as never })
      yield * page.data
      cursor = page.nextCursor ?? undefined
    } while (cursor)
  }

  async logActivity(input: ActivityInput) {
    return (await this.call('/api/v2/activity/log', 'post', { body: input })).data
  }

  // the workspace event stream

  /**
   * The workspace's changes as they happen. A connection that ends or fails is opened again with the last
   * event's id, so nothing is missed (or a `reset` event says what was missed is gone); a refusal (401, 403)
   * ends the iteration with its CairnError.
   */
  events(options: WorkspaceEventOptions = {}): WorkspaceEventStream {
    const controller = new AbortController()
    options.signal?.addEventListener('abort', () => controller.abort(), { once: true })
    const transport = this.transport
    let lastEventId = options.lastEventId
    async function* events(): AsyncGenerator<WorkspaceEvent> {
      try {
        while (!controller.signal.aborted) {
          try {
            const res = await transport.send('GET', '/api/v2/events/stream', {
              headers: { accept: 'text/event-stream',
                ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
                ...(options.workspaceId ? { 'x-workspace-id': options.workspaceId } : {}) },
              signal: controller.signal, stream: true
            })
            if (!res.body) return
            for await (const message of readSse(res.body)) {
              if (controller.signal.aborted) return
              if (message.id !== undefined) lastEventId = message.id
              yield { type: message.event, id: message.id ?? '',
                data: JSON.parse(message.data) as WorkspaceEvent['data'] }
            }
          } catch (err) {
            if (controller.signal.aborted) return
            if (err instanceof CairnError && err.statusCode > 0 && err.statusCode < 500 && err.statusCode !== 429) {
              throw err
            }
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, options.retryMs ?? 1000)
            controller.signal.addEventListener('abort', () => { clearTimeout(timer); resolve() }, { once: true })
          })
        }
      } finally {
        controller.abort()
      }
    }
    const iterator = events()
    return {
      [Symbol.asyncIterator]: () => iterator,
      get lastEventId() { return lastEventId },
      close: () => controller.abort()
    }
  }

  // chat

  /** The assistant's answer as it is written; `cancel()` or leaving the loop ends the stream and the model call. */
  chatStream(input: ChatInput, options: { signal?: AbortSignal } = {}): ChatStream {
    const controller = new AbortController()
    options.signal?.addEventListener('abort', () => controller.abort(), { once: true })
    const transport = this.transport
    async function* events(): AsyncGenerator<ChatEvent> {
      try {
        const res = await transport.send('POST', '/api/v2/chat/stream', {
          json: input, headers: { accept: 'text/event-stream' }, signal: controller.signal, stream: true
        })
        if (!res.body) return
        for await (const message of readSse(res.body)) {
          if (controller.signal.aborted) return // events already received are dropped too
          if (message.event !== 'text_delta' && message.event !== 'done' && message.event !== 'error') continue
          const data = JSON.parse(message.data) as Record<string, unknown>
          yield { type: message.event, ...data } as ChatEvent
          if (message.event !== 'text_delta') return
        }
      } catch (err) {
        if (controller.signal.aborted) return
        throw err
      } finally {
        controller.abort()
      }
    }
    const iterator = events()
    return { [Symbol.asyncIterator]: () => iterator, cancel: () => controller.abort() }
  }
}
