import { Type, type Static } from '@sinclair/typebox'
import { Uuid, Timestamp, Nullable, StringEnum, ClosedString, Pagination } from './common.js'

export const ARTIFACT_TYPES = [
  'task_plan', 'implementation_plan', 'walkthrough', 'verification_proof',
  'decision_record', 'plan_mode', 'code_change', 'research_summary'
] as const
export const ARTIFACT_STATUSES = ['draft', 'pending_review', 'approved', 'rejected', 'superseded'] as const
export const REVIEW_POLICIES = ['always_proceed', 'agent_decides', 'request_review'] as const

export type ArtifactStatus = (typeof ARTIFACT_STATUSES)[number]
export type ReviewPolicy = (typeof REVIEW_POLICIES)[number]

const TypeValue = StringEnum(ARTIFACT_TYPES, { description: 'one of the artifact type values' })
const StatusValue = StringEnum(ARTIFACT_STATUSES)
const PolicyValue = StringEnum(REVIEW_POLICIES)
// answers declare the closed sets too, so that typed clients narrow them without casts
const TypeOut = ClosedString(ARTIFACT_TYPES)
const StatusOut = ClosedString(ARTIFACT_STATUSES)
const PolicyOut = ClosedString(REVIEW_POLICIES)
const FreeObject = Type.Object({}, { additionalProperties: true })
const Title = Type.String({ minLength: 1, maxLength: 500 })
const Confidence = Type.Object({ score: Type.Number({ minimum: 0, maximum: 1 }) }, { additionalProperties: true })

/** Workspace context may come as a query parameter on every artifact route. */
export const WorkspaceQuery = Type.Object({ workspace_id: Type.Optional(Type.String()) })

const artifactFields = {
  id: Uuid,
  workspace_id: Uuid,
  customer_id: Uuid,
  type: TypeOut,
  subtype: Nullable(Type.String()),
  title: Type.String(),
  content: FreeObject,
  status: StatusOut,
  workflow_id: Nullable(Type.String()),
  workflow_run_id: Nullable(Type.String()),
  conversation_id: Nullable(Type.String()),
  message_id: Nullable(Type.String()),
  parent_artifact_id: Nullable(Type.String()),
  confidence_score: Nullable(Type.Number()),
  review_policy: PolicyOut,
  reviewed_by: Nullable(Type.String()),
  created_by: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp
}

export const CommentSchema = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  content: Type.String(),
  position: Type.Optional(FreeObject),
  created_at: Timestamp
})

export const ArtifactSchema = Type.Object(artifactFields)
/** single fetch and create: with related artifacts (and, on fetch, the comments) */
export const ArtifactDetailSchema = Type.Object({
  ...artifactFields,
  related_artifacts: Type.Array(Type.String()),
  comments: Type.Optional(Type.Array(CommentSchema))
})

export const ArtifactSummarySchema = Type.Object({
  id: Uuid, type: TypeOut, subtype: Nullable(Type.String()), title: Type.String(),
  status: StatusOut, created_at: Timestamp, updated_at: Timestamp
})

export const ChainLinkSchema = Type.Object({
  id: Uuid, title: Type.String(), type: TypeOut, status: StatusOut,
  parent_artifact_id: Nullable(Type.String()), created_at: Timestamp
})

export const CreateArtifactBody = Type.Object({
  type: TypeValue,
  title: Title,
  subtype: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  content: Type.Optional(FreeObject),
  workflow_id: Type.Optional(Uuid),
  workflow_run_id: Type.Optional(Uuid),
  parent_artifact_id: Type.Optional(Uuid),
  related_artifacts: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
  conversation_id: Type.Optional(Uuid),
  message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  confidence: Type.Optional(Confidence),
  review_policy: Type.Optional(PolicyValue)
})
export type CreateArtifactBody = Static<typeof CreateArtifactBody>

export const UpdateArtifactBody = Type.Object({
  title: Type.Optional(Title),
  content: Type.Optional(FreeObject),
  confidence: Type.Optional(Confidence),
  review_policy: Type.Optional(PolicyValue)
})
export type UpdateArtifactBody = Static<typeof UpdateArtifactBody>

export const StatusBody = Type.Object({ status: StatusValue })
export const CommentBody = Type.Object({
  content: Type.String({ minLength: 1, maxLength: 20_000 }),
  position: Type.Optional(FreeObject)
})
export const SupersedeBody = Type.Object({
  title: Type.Optional(Title),
  content: Type.Optional(FreeObject),
  confidence: Type.Optional(Confidence),
  /** default: the original's policy */
  review_policy: Type.Optional(PolicyValue)
})

export const ListArtifactsQuery = Type.Object({
  workspace_id: Type.Optional(Type.String()),
  type: Type.Optional(TypeValue),
  status: Type.Optional(StatusValue),
  workflow_id: Type.Optional(Uuid),
  workflow_run_id: Type.Optional(Uuid),
  conversation_id: Type.Optional(Uuid),
  message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  review_policy: Type.Optional(PolicyValue),
  awaiting: Type.Optional(Type.Literal('person', { description: 'only what awaits a person: pending_review, and ' +
    'drafts whose review_policy is request_review (the console\'s review queue)' })),
  ...Pagination
})
export type ListArtifactsQuery = Static<typeof ListArtifactsQuery>

const ok = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.Array>>(data: T) =>
  Type.Object({ success: Type.Literal(true), data })

export const ArtifactResponse = ok(ArtifactDetailSchema)
export const ListArtifactsResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(ArtifactSchema),
  meta: Type.Object({ count: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })
})
export const StatusResponse = ok(Type.Object({
  id: Uuid, type: TypeOut, title: Type.String(), status: StatusOut, reviewed_by: Nullable(Type.String()),
  updated_at: Timestamp
}))
export const CommentResponse = ok(Type.Object({
  id: Uuid, type: TypeOut, title: Type.String(), comments: Type.Array(CommentSchema), updated_at: Timestamp
}))
export const ChainResponse = ok(Type.Array(ChainLinkSchema))
export const SummariesResponse = ok(Type.Array(ArtifactSummarySchema))
export const MetaTypesResponse = ok(Type.Object({
  types: Type.Record(Type.String(), Type.String()),
  statuses: Type.Record(Type.String(), Type.String())
}))
export const ConversationParams = Type.Object({ conversationId: Uuid })
export const RunParams = Type.Object({ runId: Uuid })
