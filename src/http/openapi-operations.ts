/**
 * Every operation of the API, keyed by method and Fastify URL: its stable operationId (generated clients
 * name their functions after it, so it never changes once published), its tag, what it does and what its
 * success answer is. A route without an entry here fails test/system/openapi.test.ts.
 */
export interface OperationDoc {
  id: string
  tag: string
  description: string
  /** the description of the success response */
  returns: string
}

export const TAGS: Array<{ name: string; description: string }> = [
  { name: 'health', description: 'Liveness checks for supervisors and load balancers (no credentials)' },
  { name: 'accounts', description: 'Sign-up, login, users and workspaces' },
  { name: 'api-keys', description: 'API keys for scripts and integrations; JWT only' },
  { name: 'developer', description: 'API key usage, developer logs and activity entries' },
  { name: 'webhooks', description: 'Webhook endpoints and their deliveries' },
  { name: 'voice-notes', description: 'Audio, voice notes and their transcripts' },
  { name: 'channels', description: 'Channels and their messages' },
  { name: 'chat', description: 'The assistant, as JSON or as a Server-Sent Events stream' },
  { name: 'agents', description: 'Agents with tools over the knowledge base and the web' },
  { name: 'workflows', description: 'Workflows, their runs and schedules' },
  { name: 'search', description: 'Search across the workspace' },
  { name: 'events', description: 'The workspace event stream: its changes as Server-Sent Events' },
  { name: 'artifacts', description: 'Artifacts, their review states, comments and versions' },
  { name: 'knowledge', description: 'The knowledge base: uploads, documents and passage search' },
  { name: 'knowledge-graph', description: 'Documents by id, for API keys with the write scope' },
  { name: 'mcp', description: 'The Model Context Protocol tool server for coding assistants' }
]

const op = (id: string, tag: string, description: string, returns: string): OperationDoc => ({ id, tag, description,
  returns })

export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /api/health': op('healthGet', 'health',
    'Liveness and database check. Answers 503 when the database cannot be read.',
    'The service is up; `database` says whether SQLite answers'),

  'POST /api/v2/auth/signup': op('authSignup', 'accounts',
    'Creates a user, a new organization (the caller its owner) and a first workspace, and returns a session token. ' +
      'Closed (403) unless CAIRN_SIGNUP allows it.', 'The new account, its token, organization and workspace'),
  'POST /api/v2/auth/login': op('authLogin', 'accounts',
    'Exchanges email and password for a JWT. Any mismatch is the same 401. With `cookie: true` (and the header ' +
      '`x-cairn-csrf: 1`) the token is set as the console\'s HttpOnly cookie instead of being returned.',
    'A session token and its expiry'),
  'POST /api/v2/auth/logout': op('authLogout', 'accounts',
    'Ends the session of the token (or console cookie) the request carries: that token stops working at once, ' +
      'wherever it was copied. The console\'s cookie is removed.', 'The session has ended'),
  'GET /api/v2/auth/me': op('authMe', 'accounts', 'The caller, their organization role and their workspaces.',
    'The caller and their workspaces'),
  'POST /api/v2/users': op('usersCreate', 'accounts',
    'Creates a user in the caller\'s organization (organization owner or admin).', 'The new user'),
  'POST /api/v2/workspaces': op('workspacesCreate', 'accounts',
    'Creates a workspace in the caller\'s organization, the caller its owner.', 'The new workspace'),
  'GET /api/v2/workspaces': op('workspacesList', 'accounts', 'Workspaces the caller is a member of, with their role.',
    'The caller\'s workspaces'),
  'POST /api/v2/workspaces/:id/members': op('workspaceMembersAdd', 'accounts',
    'Adds a user of the same organization to a workspace (workspace owner or admin).', 'The membership'),
  'DELETE /api/v2/workspaces/:id/members/:userId': op('workspaceMembersRemove', 'accounts',
    'Removes a member from a workspace (workspace owner or admin).', 'The member was removed'),
  'GET /api/v2/workspaces/:id/members': op('workspaceMembersList', 'accounts',
    'The members of a workspace with their roles (any member may list them).', 'The members'),
  'PATCH /api/v2/workspaces/:id/members/:userId': op('workspaceMembersUpdate', 'accounts',
    'Changes a member\'s workspace role (workspace owner or admin; owners are an owner\'s to change; the last owner ' +
    'stays).', 'The membership'),
  'GET /api/v2/users': op('usersList', 'accounts', 'The people of the caller\'s organization with their roles.',
    'The organization\'s users'),
  'PATCH /api/v2/users/:id': op('usersUpdate', 'accounts',
    'Changes a person\'s organization role or name (organization owner or admin; the last owner stays).',
    'The user as changed'),
  'DELETE /api/v2/users/:id': op('usersRemove', 'accounts',
    'Removes a person from the organization: their sessions and API keys stop working at once; what they wrote ' +
    'stays (organization owner or admin).', 'The person was removed'),
  'POST /api/v2/users/:id/password-reset': op('usersPasswordReset', 'accounts',
    'Makes a single-use link (24 h) with which the person sets a new password; e-mailed when SMTP is configured.',
    'The link, shown once'),
  'POST /api/v2/invitations': op('invitationsCreate', 'accounts',
    'Invites a person by e-mail into the organization and optionally workspaces: a single-use link valid 7 days, ' +
    'in this answer only (and e-mailed when SMTP is configured).', 'The invitation and its link'),
  'GET /api/v2/invitations': op('invitationsList', 'accounts', 'Pending invitations of the organization.',
    'The pending invitations, without links'),
  'DELETE /api/v2/invitations/:id': op('invitationsRevoke', 'accounts', 'Revokes a pending invitation.',
    'The link no longer works'),
  'POST /api/v2/invitations/accept': op('invitationsAccept', 'accounts',
    'Joins the organization through an invitation link, with a password of one\'s own.',
    'A session token for the new user'),
  'POST /api/v2/auth/password': op('authPasswordChange', 'accounts',
    'Changes the caller\'s password (the current one is required); every other session of the person ends.',
    'The password was changed'),
  'POST /api/v2/auth/logout-everywhere': op('authLogoutEverywhere', 'accounts',
    'Ends every session of the caller, the one of this request included (signed in elsewhere, a browser left ' +
      'signed in). API keys keep working. The console\'s cookie is removed.', 'Every session has ended'),
  'POST /api/v2/auth/password-reset': op('authPasswordReset', 'accounts',
    'Sets a new password with a reset link; every session of the person ends.', 'The password was set'),

  'POST /api/v2/api-keys': op('apiKeysCreate', 'api-keys',
    'Issues an API key with the given scopes, optionally bound to a workspace. The key value is shown only in this ' +
      'answer.', 'The new key, with its value'),
  'GET /api/v2/api-keys': op('apiKeysList', 'api-keys',
    'The caller\'s keys, revoked ones included, without their values.', 'The caller\'s keys'),
  'GET /api/v2/api-keys/:id': op('apiKeysGet', 'api-keys', 'One of the caller\'s keys, with when it was last used.',
    'The key, without its value'),
  'DELETE /api/v2/api-keys/:id': op('apiKeysRevoke', 'api-keys', 'Revokes a key; it stops working at once.',
    'The key was revoked'),
  'POST /api/v2/api-keys/:id/rotate': op('apiKeysRotate', 'api-keys',
    'Issues a new key with the same scopes and revokes the old one at once.', 'The new key, with its value'),

  'GET /api/v2/developer/api-keys/:id/usage': op('developerKeyUsage', 'developer',
    'Requests made with one of the caller\'s keys over the last days, by day and endpoint.', 'Usage of the key'),
  'GET /api/v2/developer/logs': op('developerLogs', 'developer',
    'The caller\'s API-key requests and activity entries, newest first.', 'A page of log entries'),
  'POST /api/v2/activity/log': op('activityLog', 'developer',
    'Records an activity entry in the caller\'s developer log.', 'The recorded entry'),

  'POST /api/v2/developer/webhooks': op('webhooksCreate', 'webhooks',
    'Registers an endpoint for events of the workspace context. The signing secret is shown only in this answer.',
    'The new webhook, with its secret'),
  'GET /api/v2/developer/webhooks': op('webhooksList', 'webhooks',
    'Webhooks of the workspace context, without secrets.', 'The webhooks'),
  'GET /api/v2/developer/webhooks/events': op('webhooksEvents', 'webhooks',
    'The event names a webhook may subscribe to, each with what it tells and whether this version sends it. The ' +
    'same list for every caller.', 'The event names'),
  'PUT /api/v2/developer/webhooks/:id': op('webhooksUpdate', 'webhooks',
    'Changes a webhook\'s URL, events or active flag.', 'The updated webhook'),
  'DELETE /api/v2/developer/webhooks/:id': op('webhooksDelete', 'webhooks', 'Deletes a webhook; no further deliveries.',
    'The webhook was deleted'),
  'GET /api/v2/developer/webhooks/:id/deliveries': op('webhooksDeliveries', 'webhooks',
    'Recorded delivery attempts of a webhook, newest first.', 'Delivery attempts'),
  'POST /api/v2/developer/webhooks/:id/test': op('webhooksTest', 'webhooks',
    'Sends a `webhook.test` event to the endpoint now and reports the outcome.', 'The outcome of the test delivery'),
  'POST /api/v2/developer/webhooks/:id/deliveries/:deliveryId/redeliver': op('webhooksRedeliver', 'webhooks',
    'Sends the event of a recorded delivery again now, with the same `webhook-id`, as a new attempt.',
    'The new attempt is queued; `id` is its delivery id'),
  'POST /api/v2/developer/webhooks/:id/rotate-secret': op('webhooksRotateSecret', 'webhooks',
    'Replaces the signing secret. The old secret keeps signing (a second signature) for 24 hours.',
    'The new signing secret, shown only in this answer'),
  'POST /api/mcp': op('mcpPost', 'mcp',
    'A JSON-RPC message of the Model Context Protocol (Streamable HTTP transport, stateless): tools and resources.',
    'The JSON-RPC answer'),
  'GET /api/mcp': op('mcpGet', 'mcp', 'Not offered: the server opens no stream of its own (405).', 'Never sent'),
  'DELETE /api/mcp': op('mcpDelete', 'mcp', 'Not offered: the server keeps no sessions (405).', 'Never sent'),

  'POST /api/v2/voice-notes/audio': op('voiceNotesUploadAudio', 'voice-notes',
    'Stores an audio file (multipart field `file`, at most 100 MB) and returns the URL to use as a voice note\'s ' +
      '`audioUrl`.', 'The stored audio\'s URL, type and size'),
  'GET /api/v2/voice-notes/audio/:id': op('voiceNotesGetAudio', 'voice-notes',
    'The stored audio file, to the user who uploaded it.', 'The audio bytes, with their media type'),
  'POST /api/v2/voice-notes': op('voiceNotesCreate', 'voice-notes',
    'Creates a voice note for an audio URL (uploaded here, or an http(s) URL the server may fetch).',
    'The new voice note'),
  'GET /api/v2/voice-notes': op('voiceNotesList', 'voice-notes', 'The caller\'s voice notes, newest first.',
    'A page of voice notes'),
  'GET /api/v2/voice-notes/:id': op('voiceNotesGet', 'voice-notes', 'One of the caller\'s voice notes.',
    'The voice note'),
  'PUT /api/v2/voice-notes/:id': op('voiceNotesUpdate', 'voice-notes',
    'Changes a voice note\'s title, tags (replaced) or metadata (replaced).', 'The updated voice note'),
  'DELETE /api/v2/voice-notes/:id': op('voiceNotesDelete', 'voice-notes', 'Deletes a voice note and its transcript.',
    'The voice note was deleted'),
  'POST /api/v2/voice-notes/:id/transcribe': op('voiceNotesTranscribe', 'voice-notes',
    'Starts transcription in the background (409 while processing or when completed).', 'Transcription was queued'),
  'GET /api/v2/voice-notes/:id/transcript': op('voiceNotesTranscript', 'voice-notes',
    'The transcript of a voice note, once completed.', 'The transcript'),

  'POST /api/v2/channels': op('channelsCreate', 'channels', 'Creates a channel in the workspace context.',
    'The new channel'),
  'GET /api/v2/channels': op('channelsList', 'channels', 'Channels of the workspace context the caller can read.',
    'The channels'),
  'GET /api/v2/channels/:id/messages': op('channelsMessages', 'channels',
    'Messages of a channel, newest first, before a cursor.', 'A page of messages'),
  'POST /api/v2/messages': op('messagesCreate', 'channels',
    'Posts a message to a channel; emits `message.created` for public, announcement and text channels.',
    'The new message'),

  'POST /api/v2/chat': op('chatSend', 'chat',
    'Asks the assistant and waits for the whole answer (with the passages it was made from, `citations`); with ' +
      '`channelId` the reply is also posted there.',
    'The assistant\'s reply'),
  'POST /api/v2/chat/stream': op('chatStream', 'chat',
    'Asks the assistant and receives the answer as Server-Sent Events: `ready`, `text_delta` {content} pieces, ' +
      '`ping` every 15 s, then exactly one of `done` {conversationId, reply, model, citations} or `error` ' +
      '{message}; `citations` are the passages the answer was made from ({documentId, fileName, chunkId, ' +
      'chunkIndex, excerpt}). Every ' +
        'event carries an `id`. Close the connection on `done` or `error`: an EventSource that reconnects would post ' +
          'the question again.', 'An event stream'),

  'POST /api/v2/agents': op('agentsCreate', 'agents', 'Creates an agent with a system prompt and tools.',
    'The new agent'),
  'GET /api/v2/agents': op('agentsList', 'agents', 'Agents of the caller\'s organization.', 'The agents'),
  'GET /api/v2/agents/:id': op('agentsGet', 'agents', 'One agent of the caller\'s organization.', 'The agent'),
  'DELETE /api/v2/agents/:id': op('agentsDelete', 'agents',
    'Deletes an agent (its creator or an organization owner/admin).', 'The agent was deleted'),
  'POST /api/v2/agents/:id/message': op('agentsMessage', 'agents',
    'Sends a message to an agent; it may call its tools before answering.',
    'The agent\'s answer and the tools it called'),

  'POST /api/v2/workflows': op('workflowsCreate', 'workflows', 'Creates a workflow in the workspace context.',
    'The new workflow'),
  'GET /api/v2/workflows': op('workflowsList', 'workflows', 'Workflows of the workspace context.', 'The workflows'),
  'GET /api/v2/workflows/:id': op('workflowsGet', 'workflows', 'One workflow.', 'The workflow'),
  'PUT /api/v2/workflows/:id': op('workflowsUpdate', 'workflows',
    'Replaces a workflow\'s definition or schedule (its creator or a workspace owner/admin).', 'The updated workflow'),
  'DELETE /api/v2/workflows/:id': op('workflowsDelete', 'workflows',
    'Deletes a workflow (its creator or a workspace owner/admin).', 'The workflow was deleted'),
  'POST /api/v2/workflows/:id/execute': op('workflowsExecute', 'workflows',
    'Queues a run of the workflow with the given inputs, acting with the caller\'s rights.', 'The queued run'),
  'GET /api/v2/workflows/:id/runs': op('workflowsRuns', 'workflows', 'Runs of a workflow, newest first.', 'The runs'),
  'GET /api/v2/workflow-runs/:runId': op('workflowRunsGet', 'workflows', 'One run with its step outputs.', 'The run'),

  'POST /api/v2/search': op('searchAll', 'search',
    'Searches knowledge, artifacts, voice-note transcripts and channel messages the caller can read, at once.',
    'Matches by kind'),

  'GET /api/v2/artifacts/meta/types': op('artifactsTypes', 'artifacts',
    'The artifact types and status values (no credentials).', 'The artifact types'),
  'GET /api/v2/artifacts': op('artifactsList', 'artifacts',
    'Artifacts of the workspace context, filtered and paginated.', 'A page of artifacts'),
  'POST /api/v2/artifacts': op('artifactsCreate', 'artifacts', 'Creates an artifact in the workspace context.',
    'The new artifact'),
  'GET /api/v2/artifacts/:id': op('artifactsGet', 'artifacts', 'One artifact with its comments.', 'The artifact'),
  'PATCH /api/v2/artifacts/:id': op('artifactsUpdate', 'artifacts',
    'Changes an artifact\'s title, content, metadata or review policy.', 'The updated artifact'),
  'DELETE /api/v2/artifacts/:id': op('artifactsDelete', 'artifacts', 'Deletes an artifact.',
    'The artifact was deleted'),
  'POST /api/v2/artifacts/:id/status': op('artifactsSetStatus', 'artifacts',
    'Moves an artifact to another review state; API keys may not decide reviews that require a person.',
    'The artifact in its new state'),
  'POST /api/v2/artifacts/:id/comments': op('artifactsComment', 'artifacts', 'Adds a comment to an artifact.',
    'The new comment'),
  'POST /api/v2/artifacts/:id/supersede': op('artifactsSupersede', 'artifacts',
    'Creates a new version of an artifact and marks the old one superseded.', 'The new version'),
  'GET /api/v2/artifacts/:id/chain': op('artifactsChain', 'artifacts', 'All versions of an artifact, oldest first.',
    'The versions'),
  'GET /api/v2/artifacts/conversation/:conversationId': op('artifactsByConversation', 'artifacts',
    'Artifacts created in a conversation.', 'The artifacts of the conversation'),
  'GET /api/v2/artifacts/workflow/:runId': op('artifactsByWorkflowRun', 'artifacts',
    'Artifacts created by a workflow run.', 'The artifacts of the run'),
  'GET /api/v2/events/stream': op('eventStream', 'events',
    'The workspace\'s changes that the caller may read, as Server-Sent Events: `artifact.created`, ' +
      '`artifact.updated`, `artifact.status_changed` (+ `status`, `reviewed_by`), ' +
      '`artifact.commented` (+ `comment`), ' +
      '`artifact.deleted`, `document.indexed` (+ `document`), `voice_note.updated` (+ `status`), `message.created`, ' +
      '`workflow_run.updated` (+ `workflow_id`, `status`); each `data` has `id` (the resource\'s), `workspace_id` ' +
      'and `at`. Every event has an `id`: a reconnect with `Last-Event-ID` receives what it missed (the last 24 h ' +
      'at least), or one `reset` event when that is gone. A comment line every 15 s. API keys (`artifacts:read`) ' +
      'receive `artifact.*` events only. Not webhook events.', 'An event stream'),

  'GET /api/knowledge/health': op('knowledgeHealth', 'health',
    'Knowledge service health and the supported file formats (no credentials, never rate limited).',
    'The knowledge service is up'),
  'POST /api/knowledge/upload': op('knowledgeUpload', 'knowledge',
    'Uploads one file (multipart field `file`, at most 50 MB), extracts its text and indexes its passages. ' +
      'Without `scope`, the document goes to the workspace when one is given (an API key bound to a workspace, ' +
      '`workspaceId`, the workspace context), else to the organization.',
    'The stored document'),
  'POST /api/knowledge/upload/batch': op('knowledgeUploadBatch', 'knowledge',
    'Uploads up to 10 files (multipart field `files`); unreadable files are reported one by one.',
    'The stored documents and the files that failed'),
  'GET /api/knowledge/documents': op('knowledgeDocumentsList', 'knowledge',
    'Documents the caller can read, newest first.', 'A page of documents'),
  'GET /api/knowledge/document/:id': op('knowledgeDocumentGet', 'knowledge', 'A document with a page of its passages.',
    'The document and its passages'),
  'DELETE /api/knowledge/document/:id': op('knowledgeDocumentDelete', 'knowledge',
    'Deletes a document, its passages and its files (JWT; API keys use the knowledge-graph route).',
    'The document was deleted'),
  'GET /api/knowledge/document/:id/download': op('knowledgeDocumentDownload', 'knowledge',
    'The original file as uploaded, or its extracted text when the original is not kept.', 'The file'),
  'GET /api/knowledge/documents/:id/status': op('knowledgeDocumentStatus', 'knowledge',
    'Indexing status and progress of a document.', 'The indexing status'),
  'POST /api/knowledge/search': op('knowledgeSearch', 'knowledge', 'Searches the passages the caller can read.',
    'Matching passages, best first'),
  'GET /api/knowledge/stats': op('knowledgeStats', 'knowledge',
    'Counts and sizes of the documents the caller can read.', 'Knowledge base statistics'),
  'GET /api/knowledge-graph/documents/:id': op('knowledgeGraphDocumentGet', 'knowledge-graph',
    'A document by id, with its metadata.', 'The document'),
  'DELETE /api/knowledge-graph/documents/:id': op('knowledgeGraphDocumentDelete', 'knowledge-graph',
    'Deletes a document (API keys with the write scope).', 'The document was deleted')
}
