import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { and, eq, sql } from 'drizzle-orm'
import { conversationMessages, conversations } from '../../schema/tables/assistant.js'
import { nowIso } from '../db/index.js'
import { writeTurn } from '../db/write-intent.js'
import type { Principal } from '../auth/plugin.js'
import type { Reader } from '../knowledge/readers.js'
import type { SearchHit } from '../knowledge/search.js'
import { ModelError, modelFromConfig, openAiModel, type ChatMessage, type LanguageModel, type ToolCall,
  type ToolSpec } from '../ai/llm.js'
import { HttpError, notFound } from '../http/errors.js'
import { fuseHits, rewriteQuery } from './rewrite.js'

export const TOOL_NAMES = ['search_knowledge', 'web_search'] as const
export type ToolName = (typeof TOOL_NAMES)[number]

const TOOL_SPECS: Record<ToolName, ToolSpec> = {
  search_knowledge: {
    name: 'search_knowledge',
    description: 'Search the user\'s knowledge base: a question or keywords; returns the best-matching passages, ' +
      'each with its document\'s file name and title and the section it is in (its headings, outermost first).',
    parameters: { type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
      required: ['query'] }
  },
  web_search: {
    name: 'web_search',
    description: 'Search the web.',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }
  }
}

/**
 * A model server failure is a 502 with its (safe) message, its upstream detail logged only; anything else
 * passes through.
 */
export function modelFailure(err: unknown): unknown {
  if (!(err instanceof ModelError)) return err
  const failure = new HttpError(502, err.message, 'MODEL_UNAVAILABLE')
  failure.logDetail = { upstream: err.detail }
  return failure
}

/** rounds of tool calls before the model must answer */
const MAX_TOOL_ROUNDS = 4

export interface ConverseInput {
  principal: Principal
  reader: Reader
  message: string
  conversationId?: string
  agentId?: string
  systemPrompt?: string
  tools?: ToolName[]
  signal?: AbortSignal
  onDelta?: (text: string) => void
}

/** A passage the assistant was given to answer from: where it is, and its first characters. */
export interface Citation {
  documentId: string
  fileName: string
  chunkId: string
  chunkIndex: number
  excerpt: string
}

export interface ConverseResult {
  reply: string
  conversationId: string
  model: string
  toolCalls: Array<{ tool: string; input: unknown }>
  /** the passages of the knowledge base the answer was made from, first found first */
  citations: Citation[]
}

/** passages cited in one answer, at most */
const MAX_CITATIONS = 20
/** characters of a cited passage sent with the answer (the passage itself is a read away) */
const EXCERPT_CHARS = 300

/**
 * chat answers one person may have under way at once, streamed or not: each holds a model call, and a stream a
 * connection, for as long as the model takes
 */
export const MAX_CHATS_PER_USER = 4

/**
 * What agents, chat and workflows share: the caller's knowledge as a reader, the model (configured, or
 * extractive over that knowledge), persisted conversations and a bounded tool loop.
 */
export function createAssistant(app: FastifyInstance) {
  const db = app.db
  const search = app.knowledgeSearch
  const { readerFor } = app.knowledgeReaders
  const p = sql.placeholder
  const ownConversation = db.select({ id: conversations.id }).from(conversations)
    .where(and(eq(conversations.id, p('id')), eq(conversations.userId, p('userId')),
      eq(conversations.customerId, p('customerId')))).prepare()
  const history = db.select({ role: conversationMessages.role, content: conversationMessages.content,
    toolCalls: conversationMessages.toolCalls, toolCallId: conversationMessages.toolCallId })
    .from(conversationMessages).where(eq(conversationMessages.conversationId, p('conversationId')))
    .orderBy(conversationMessages.seq).prepare()

  /** the model that rewrites the assistant's search_knowledge queries; none without a model or with the setting off */
  const rewriter = app.config.llm.baseUrl && app.config.searchRewrite.enabled
    ? openAiModel(app.config.llm.baseUrl, app.config.llm.apiKey, app.config.llm.model ?? 'default') : undefined

  function readerOf(request: FastifyRequest): Reader {
    return app.knowledgeReaders.readerOf(request)
  }

  /**
   * Hybrid retrieval over what the reader can read: the tools, workflow steps, unified search and the
   * extractive model.
   */
  async function searchKnowledge(reader: Reader, query: string, limit = 5): Promise<SearchHit[]> {
    const q = query.trim().slice(0, 1000)
    if (!q) return []
    return search.search(reader, {}, q, limit, 'hybrid')
  }

  /**
   * The assistant's own search_knowledge call: with a model, the question and the model's search terms for it
   * (src/assistant/rewrite.ts), fused; without one, or when the rewrite fails or times out, the question as asked.
   * Both searches read through the same reader, so the terms can find nothing the caller could not find.
   *
   * Why both and not the terms alone: the query in a tool call is already the model's own wording, often keywords,
   * and a rewrite can drop what the question matched literally (an identifier, a name, a version paraphrased into
   * words). Searching the question keeps every passage it finds on its own; the terms add the passages written in
   * other words; reciprocal rank fusion puts those both found first and interleaves the rest. The question's search
   * runs while the model is asked, so the rewrite adds the model call and one search to the tool's time.
   */
  async function toolSearch(reader: Reader, query: string, limit: number,
    signal?: AbortSignal): Promise<SearchHit[]> {
    const asked = searchKnowledge(reader, query, limit)
    const q = query.trim().slice(0, 1000)
    if (!rewriter || !q) return asked
    // its failure is seen where it is awaited, below: not an unhandled rejection while the model is asked
    asked.catch(() => undefined)
    let terms = ''
    try {
      terms = await rewriteQuery(rewriter, q, { timeoutMs: app.config.searchRewrite.timeoutMs, signal })
    } catch (err) {
      if (!signal?.aborted) app.log.warn({ err: (err as Error).message,
        upstream: err instanceof ModelError ? err.detail : undefined },
      'search terms from the model failed: searching with the question as asked')
    }
    if (!terms || terms.toLowerCase() === q.toLowerCase()) return asked
    const [first, second] = await Promise.all([asked, searchKnowledge(reader, terms, limit)])
    return fuseHits([first, second], limit)
  }

  /** the model; `found` hears of the passages the extractive model answers from */
  function modelFor(reader: Reader, found?: (hits: SearchHit[]) => void): LanguageModel {
    return modelFromConfig(app.config.llm, async (q) => {
      const hits = await searchKnowledge(reader, q, 5)
      found?.(hits)
      return hits.map((h) => ({ text: h.chunk.text, fileName: h.document.fileName }))
    })
  }

  async function runTool(reader: Reader, call: ToolCall, allowed: ToolName[],
    signal?: AbortSignal, found?: (hits: SearchHit[]) => void): Promise<{ input: unknown; output: string }> {
    let input: { query?: unknown; limit?: unknown } = {}
    try { input = JSON.parse(call.arguments || '{}') } catch {
      return { input: call.arguments,
        output: 'Error: the tool arguments were not valid JSON' }
    }
    if (!(allowed as string[]).includes(call.name)) {
      return { input, output: `Error: the tool ${call.name} is not available to this assistant` }
    }
    const query = typeof input.query === 'string' ? input.query : ''
    if (call.name === 'search_knowledge') {
      const hits = await toolSearch(reader, query,
        typeof input.limit === 'number' ? Math.min(10, Math.max(1, input.limit)) : 5, signal)
      found?.(hits)
      // where each passage is, so the model can cite it ("Server Configuration › Memory"): the document's title and
      // the headings above the passage (the title's own heading among them when the text starts with it)
      return { input, output: JSON.stringify(hits.map((h) => ({ document: h.document.fileName,
        title: h.document.title || h.document.fileName,
        ...(h.chunk.headingPath.length ? { section: h.chunk.headingPath.join(' › ') } : {}),
        text: h.chunk.text }))) }
    }
    if (!app.config.webSearchUrl) {
      return { input, output: 'web_search is not configured on this server (CAIRN_WEB_SEARCH_URL is unset)' }
    }
    try {
      const url = new URL(app.config.webSearchUrl)
      url.pathname = url.pathname.replace(/\/?$/, '/search')
      url.searchParams.set('q', query)
      url.searchParams.set('format', 'json')
      const res = await fetch(url,
        { signal: AbortSignal.any([AbortSignal.timeout(15_000), ...(signal ? [signal] : [])]) })
      const json = await res.json() as { results?: Array<{ title?: string; url?: string; content?: string }> }
      return { input,
        output: JSON.stringify((json.results ?? []).slice(0,
          5).map((r) => ({ title: r.title, url: r.url, content: r.content }))) }
    } catch {
      return { input, output: 'web_search failed: the search service did not answer' }
    }
  }

  /** One user turn: persists the question, runs the model with its tools, persists and returns the answer. */
  async function converse(input: ConverseInput): Promise<ConverseResult> {
    const { principal } = input
    let conversationId = input.conversationId
    if (conversationId) {
      if (!ownConversation.get({ id: conversationId, userId: principal.userId, customerId: principal.customerId })) {
        throw notFound('Conversation not found')
      }
    } else {
      conversationId = randomUUID()
      const now = nowIso()
      db.insert(conversations).values({ id: conversationId, customerId: principal.customerId,
        userId: principal.userId, agentId: input.agentId ?? null, createdAt: now, updatedAt: now }).run()
    }
    const past: ChatMessage[] = history.all({ conversationId })
      .map((m) => ({ role: m.role, content: m.content,
        ...(m.toolCalls ? { toolCalls: JSON.parse(m.toolCalls) as ToolCall[] } : {}),
        ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}) }))
    const fresh: ChatMessage[] = [{ role: 'user', content: input.message }]
    const cited = new Map<string, Citation>()
    const cite = (hits: SearchHit[]) => {
      for (const h of hits) {
        if (cited.size >= MAX_CITATIONS) return
        if (!cited.has(h.chunk.id)) {
          cited.set(h.chunk.id, { documentId: h.document.id, fileName: h.document.fileName, chunkId: h.chunk.id,
            chunkIndex: h.chunk.chunkIndex, excerpt: h.chunk.text.slice(0, EXCERPT_CHARS) })
        }
      }
    }
    const model = modelFor(input.reader, cite)
    const tools = (input.tools ?? []).map((t) => TOOL_SPECS[t])
    const used: Array<{ tool: string; input: unknown }> = []
    let reply = ''
    for (let round = 0; ; round++) {
      const messages = [...(input.systemPrompt ? [{ role: 'system' as const, content: input.systemPrompt }] : []),
        ...past, ...fresh]
      const out = await model.complete(messages,
        { tools: round < MAX_TOOL_ROUNDS ? tools : [], signal: input.signal, onDelta: input.onDelta })
      if (out.toolCalls.length === 0 || round >= MAX_TOOL_ROUNDS) { reply = out.content; break }
      fresh.push({ role: 'assistant', content: out.content, toolCalls: out.toolCalls })
      for (const call of out.toolCalls) {
        const result = await runTool(input.reader, call, input.tools ?? [], input.signal, cite)
        used.push({ tool: call.name, input: result.input })
        fresh.push({ role: 'tool', content: result.output, toolCallId: call.id })
      }
    }
    fresh.push({ role: 'assistant', content: reply })
    // after the model's answer: a write turn of its own (src/db/write-intent.ts), the event loop free
    await writeTurn(app.sqlite)
    const now = nowIso()
    db.transaction((tx) => {
      tx.insert(conversationMessages).values(fresh.map((m) => ({ conversationId: conversationId!, role: m.role,
        content: m.content, toolCalls: m.toolCalls ? JSON.stringify(m.toolCalls) : null,
        toolCallId: m.toolCallId ?? null, createdAt: now }))).run()
      tx.update(conversations).set({ updatedAt: now }).where(eq(conversations.id, conversationId!)).run()
    }, { behavior: 'immediate' })
    return { reply, conversationId: conversationId!, model: model.model, toolCalls: used,
      citations: [...cited.values()] }
  }

  const ownsConversation = (principal: Principal, id: string) => !!ownConversation.get({ id,
    userId: principal.userId, customerId: principal.customerId })

  const chatsUnderWay = new Map<string, number>()
  /**
   * One of the person's MAX_CHATS_PER_USER chat slots, or undefined when all are taken; the function returned
   * gives it back (once, however often it is called)
   */
  function chatSlot(userId: string): (() => void) | undefined {
    const held = chatsUnderWay.get(userId) ?? 0
    if (held >= MAX_CHATS_PER_USER) return undefined
    chatsUnderWay.set(userId, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = chatsUnderWay.get(userId)! - 1
      if (left === 0) chatsUnderWay.delete(userId)
      else chatsUnderWay.set(userId, left)
    }
  }

  return { readerFor, readerOf, searchKnowledge, modelFor, converse, ownsConversation, chatSlot }
}

export type Assistant = ReturnType<typeof createAssistant>
