import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum, ClosedString, Uuid } from './common.js'
import { ARTIFACT_TYPES } from './artifacts.js'

const StepId = Type.String({ minLength: 1, maxLength: 64 })
const Text = Type.String({ minLength: 1 })
const FreeObject = Type.Object({}, { additionalProperties: true })

/**
 * Workflow steps (docs/api/assistant.md#workflows): one object per type, told apart by `type`. Strings may hold
 * templates.
 */
export const LlmStep = Type.Object({ id: StepId, type: Type.Literal('llm'), prompt: Text })
export const SearchKnowledgeStep = Type.Object({
  id: StepId, type: Type.Literal('search_knowledge'), query: Text,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 }))
})
export const AgentStep = Type.Object({ id: StepId, type: Type.Literal('agent'), agentId: Type.String({ minLength: 1 }),
  message: Text })
export const PostMessageStep = Type.Object({ id: StepId, type: Type.Literal('post_message'),
  channelId: Type.String({ minLength: 1 }), content: Text })
export const CreateArtifactStep = Type.Object({
  id: StepId, type: Type.Literal('create_artifact'), artifactType: StringEnum(ARTIFACT_TYPES),
  title: Type.String({ minLength: 1, maxLength: 500 }), content: Type.Optional(FreeObject)
})
export const WorkflowStep = Type.Union([LlmStep, SearchKnowledgeStep, AgentStep, PostMessageStep, CreateArtifactStep])
export type WorkflowStep = Static<typeof WorkflowStep>
/**
 * The same union for requests, told apart by `type` (OpenAPI/Ajv discriminator): a step is checked only
 * against its own type's schema, so errors name what is wrong with it rather than every other type.
 */
export const WorkflowStepInput = Type.Unsafe<WorkflowStep>({
  type: 'object', required: ['type'], discriminator: { propertyName: 'type' }, oneOf: WorkflowStep.anyOf
})

export const InputDef = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }), required: Type.Optional(Type.Boolean()),
  default: Type.Optional(Type.Unknown())
})
export type InputDef = Static<typeof InputDef>

const Inputs = Type.Object({}, { additionalProperties: true })
export const Schedule = Type.Object({ cron: Type.String({ minLength: 1, maxLength: 100 }),
  inputs: Type.Optional(Inputs) })

export const WorkflowDefinitionBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  inputs: Type.Optional(Type.Array(InputDef, { maxItems: 50 })),
  steps: Type.Array(WorkflowStepInput, { minItems: 1, maxItems: 50 }),
  schedule: Type.Optional(Type.Union([Type.Null(), Schedule]))
})
export type WorkflowDefinitionBody = Static<typeof WorkflowDefinitionBody>

export const WorkflowSchema = Type.Object({
  id: Uuid, name: Type.String(), description: Type.String(), workspace_id: Uuid,
  inputs: Type.Array(InputDef), steps: Type.Array(WorkflowStep),
  schedule: Type.Union([Type.Null(), Type.Object({ cron: Type.String(), inputs: Inputs })]),
  created_by: Type.String(),
  updated_by: Type.String({ description: 'who last saved the definition or schedule; scheduled runs act as this ' +
      'user' }),
  created_at: Type.String(), updated_at: Type.String()
})
export type Workflow = Static<typeof WorkflowSchema>

export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const
export const StepState = Type.Object({
  id: Type.String(), type: Type.String(), status: StringEnum(['running', 'completed', 'failed'] as const),
  output: Type.Optional(Type.String()), error: Type.Optional(Type.String()), started_at: Type.String(),
  finished_at: Type.Optional(Type.String())
})
export type StepState = Static<typeof StepState>

export const RunSchema = Type.Object({
  id: Uuid, workflow_id: Uuid, status: StringEnum(RUN_STATUSES), trigger: StringEnum(['api', 'schedule'] as const),
  started_by: Type.String({ description: 'the user whose rights the run acts with' }),
  inputs: Inputs, outputs: Type.Union([Type.Null(), Type.Record(Type.String(), Type.String())]),
  steps: Type.Array(StepState),
  error: Nullable(Type.String()), created_at: Type.String(), started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String())
})
export type Run = Static<typeof RunSchema>

export const WorkflowQuery = Type.Object({ workspaceId: Type.Optional(Type.String()) })
export const WorkflowParams = Type.Object({ id: Uuid })
export const RunParams = Type.Object({ runId: Uuid })
export const ExecuteBody = Type.Optional(Type.Object({ inputs: Type.Optional(Inputs) }))
export const RunsQuery = Type.Object({ workspaceId: Type.Optional(Type.String()),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }) })

export const WorkflowResponse = Type.Object({ success: Type.Literal(true), workflow: WorkflowSchema })
export const WorkflowListResponse = Type.Object({ success: Type.Literal(true), workflows: Type.Array(WorkflowSchema) })
export const ExecuteResponse = Type.Object({ success: Type.Literal(true),
  run: Type.Object({ id: Uuid, status: ClosedString(RUN_STATUSES) }) })
export const RunResponse = Type.Object({ success: Type.Literal(true), run: RunSchema })
export const RunListResponse = Type.Object({ success: Type.Literal(true), runs: Type.Array(RunSchema) })
