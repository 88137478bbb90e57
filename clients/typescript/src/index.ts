export { CairnClient } from './client.js'
export type {
  CairnClientOptions, Artifact, ArtifactListItem, ChainLink, CreateArtifactInput, UpdateArtifactInput,
  SupersedeArtifactInput,
  ArtifactStatus, ListArtifactsQuery, SearchInput, SearchResult, KnowledgeDocument, ListDocumentsQuery,
  DocumentWithChunks,
  UploadResult, UploadSource, UploadOptions, LogEntry, LogsQuery, ActivityInput, ChatInput, ChatEvent, ChatStream,
  WorkspaceEvent, WorkspaceEventStream, WorkspaceEventOptions,
  WaitOptions, Me, ArtifactComment,
  ApiKeyInfo, NewApiKey, CreateApiKeyInput, ApiKeyScope, Workspace, NewWorkspace, WorkspaceMember,
  VoiceNote, VoiceNoteDetail, VoiceNoteStatus, ListVoiceNotesQuery, CreateVoiceNoteInput, VoiceNoteTranscript,
  UploadedAudio, Channel, CreateChannelInput, ChannelMessage, PostMessageInput,
  Path, Operation, JsonBody, QueryOf, PathParams, Success
} from './client.js'
export { CairnError } from './errors.js'
export { Transport, type TransportOptions, type RetryOptions, type RequestOptions } from './http.js'
export { verifyWebhook, verifyCairnSignature, verifyStandardWebhook, type StandardWebhookOptions,
  type HeaderSource } from './webhooks.js'
export type { paths, components } from './generated/openapi.js'
