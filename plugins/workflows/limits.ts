import type { TObject, TSchema } from '@sinclair/typebox'
import { AgentMessageBody } from '../../schema/api/agents.js'
import { CreateArtifactBody } from '../../schema/api/artifacts.js'
import { ChatBody } from '../../schema/api/chat.js'
import { PostMessageBody } from '../../schema/api/channels.js'
import { SearchBody } from '../../schema/api/knowledge.js'
import type { WorkflowStep } from '../../schema/api/workflows.js'

/** The bounds of one filled text of a step: those of the route field the step stands for. */
export interface TextLimit {
  readonly min: number
  readonly max: number
  /** the route's field, for messages */
  readonly what: string
}

/** the bounds of a field, read from the route's own request schema: one source for a limit */
function textLimit(body: TObject, field: string, what: string): TextLimit {
  const s = body.properties[field] as TSchema & { minLength?: number; maxLength?: number } | undefined
  if (s?.maxLength === undefined) throw new Error(`${what}: the route's schema sets no maxLength on "${field}"`)
  return { min: s.minLength ?? 0, max: s.maxLength, what }
}

/**
 * Every text a step fills, with the limits of the route that step stands for (docs/api/assistant.md#workflows): a
 * run never does through a workflow what the route would refuse. Other strings of a step (agent and channel ids)
 * are identifiers, checked to exist when the workflow is saved, so they cannot hold a template.
 */
export const STEP_TEXT_LIMITS: { readonly [K in WorkflowStep['type']]: Readonly<Record<string, TextLimit>> } = {
  llm: { prompt: textLimit(ChatBody, 'message', 'a chat message (POST /api/v2/chat)') },
  search_knowledge: { query: textLimit(SearchBody, 'query', 'a search query (POST /api/knowledge/search)') },
  agent: { message: textLimit(AgentMessageBody, 'message', 'an agent message (POST /api/v2/agents/{id}/message)') },
  post_message: { content: textLimit(PostMessageBody, 'content', 'a channel message (POST /api/v2/messages)') },
  create_artifact: { title: textLimit(CreateArtifactBody, 'title', 'an artifact title (POST /api/v2/artifacts)') }
}

/** the longest an identifier field of a step may be once filled */
export const ID_MAX = 255
