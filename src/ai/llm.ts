import type { Config } from '../config.js'
import { fold, queryTerms, roughStem } from '../knowledge/query.js'

export interface ToolCall { id: string; name: string; arguments: string }
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  toolCalls?: ToolCall[]
  toolCallId?: string
}
export interface ToolSpec { name: string; description: string; parameters: Record<string, unknown> }
export interface Completion { content: string; toolCalls: ToolCall[]; model: string }

export interface CompleteOptions {
  tools?: ToolSpec[]
  /** aborted when the client goes away: the upstream request is cancelled */
  signal?: AbortSignal
  /** text fragments as they arrive, in order */
  onDelta?: (text: string) => void
  /** the most tokens the answer may have (`max_tokens`); unset: the server's own limit */
  maxTokens?: number
  /** sampling temperature; unset: the server's default */
  temperature?: number
}

/** A language model: messages in, text (streamed through onDelta) and tool calls out. */
export interface LanguageModel {
  readonly model: string
  complete(messages: ChatMessage[], options?: CompleteOptions): Promise<Completion>
}

/**
 * A model failure the caller should see (server down, bad answer). Its message is safe to show; what the
 * server said and where it lives are in `detail`, for the log only.
 */
export class ModelError extends Error {
  override name = 'ModelError'
  constructor(message: string, readonly detail: { url: string; status?: number; body?: string; cause?: string }) {
    super(message)
  }
}

/** An upstream `{"error": ...}` object (OpenAI, Ollama, llama.cpp and vLLM shapes) as one line for the log. */
function upstreamError(json: unknown): string | undefined {
  const e = (json as { error?: unknown } | null)?.error
  if (e === undefined || e === null) return undefined
  if (typeof e === 'string') return e
  const message = (e as { message?: unknown }).message
  return typeof message === 'string' ? message : JSON.stringify(e)
}

const TIMEOUT_MS = 120_000

/** Reads `data:` lines of an SSE body, one JSON payload at a time, until `[DONE]` (then yields `null`). */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string | null> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '')
      buffer = buffer.slice(nl + 1)
      if (!line.startsWith('data:')) continue
      const data = line.slice(5).trim()
      if (data === '[DONE]') { yield null; return }
      if (data) yield data
    }
  }
}

/** OpenAI-compatible `/chat/completions` with streaming and tool calls (Ollama, llama.cpp, vLLM, LM Studio, OpenAI). */
export function openAiModel(baseUrl: string, apiKey: string | undefined, model: string): LanguageModel {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`
  return {
    model,
    async complete(messages, options = {}) {
      const body = {
        model,
        stream: true,
        messages: messages.map((m) => ({
          role: m.role,
          content: m.content,
          ...(m.toolCalls?.length
            ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function',
                function: { name: c.name, arguments: c.arguments } })) } : {}),
          ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {})
        })),
        ...(options.tools?.length
          ? { tools: options.tools.map((t) => ({ type: 'function',
              function: { name: t.name, description: t.description, parameters: t.parameters } })) }
          : {}),
        ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {})
      }
      const signal = AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), ...(options.signal ? [options.signal] : [])])
      let res: Response
      try {
        res = await fetch(url, {
          method: 'POST',
          signal,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream',
            ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
          body: JSON.stringify(body)
        })
      } catch (err) {
        if (options.signal?.aborted) throw err
        throw new ModelError('The language model server is unreachable', { url, cause: (err as Error).message })
      }
      if (!res.ok || !res.body) {
        const text = await res.text().catch(() => '')
        throw new ModelError(`The language model server failed (HTTP ${res.status})`,
          { url, status: res.status, body: text.slice(0, 2000) })
      }
      const type = res.headers.get('content-type') ?? ''
      if (!/^text\/event-stream/i.test(type)) return nonStreamAnswer(res, url, model, options)
      let content = ''
      let finished = false
      const calls = new Map<number, ToolCall>()
      try {
        for await (const data of sseData(res.body)) {
          if (data === null) { finished = true; break }
          let json: { error?: unknown;
            choices?: Array<{ finish_reason?: string | null;
              delta?: { content?: string | null;
                tool_calls?: Array<{ index?: number; id?: string;
                  function?: { name?: string; arguments?: string } }> } }> }
          try { json = JSON.parse(data) } catch { continue }
          const failure = upstreamError(json)
          if (failure !== undefined) {
            throw new ModelError('The language model failed while answering',
              { url, status: res.status, body: failure.slice(0, 2000) })
          }
          if (json.choices?.[0]?.finish_reason) finished = true
          const delta = json.choices?.[0]?.delta
          if (!delta) continue
          if (delta.content) {
            content += delta.content
            options.onDelta?.(delta.content)
          }
          for (const tc of delta.tool_calls ?? []) {
            const i = tc.index ?? 0
            const call = calls.get(i) ?? { id: '', name: '', arguments: '' }
            if (tc.id) call.id = tc.id
            if (tc.function?.name) call.name += tc.function.name
            if (tc.function?.arguments) call.arguments += tc.function.arguments
            calls.set(i, call)
          }
        }
      } catch (err) {
        if (options.signal?.aborted || err instanceof ModelError) throw err
        throw new ModelError('The language model stream broke off', { url, cause: (err as Error).message })
      }
      // a stream that ends with neither [DONE] nor a finish reason was cut off: not an answer
      if (!finished) {
        throw new ModelError('The language model stream broke off', { url, cause: 'the stream ended without [DONE]' })
      }
      return { content, toolCalls: [...calls.values()].map((c, i) => ({ ...c, id: c.id || `call_${i}` })), model }
    }
  }
}

/** A server that ignored `stream: true` and answered one JSON completion (or a JSON error with status 200). */
async function nonStreamAnswer(res: Response, url: string, model: string,
  options: CompleteOptions): Promise<Completion> {
  const text = await res.text()
  let json: { choices?: Array<{ message?: { content?: string | null;
    tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> } }> }
  try { json = JSON.parse(text) } catch {
    throw new ModelError('The language model server sent an answer that is not a completion',
      { url, status: res.status, body: text.slice(0, 2000) })
  }
  const failure = upstreamError(json)
  const message = json.choices?.[0]?.message
  if (failure !== undefined || !message) {
    throw new ModelError('The language model failed while answering',
      { url, status: res.status, body: (failure ?? text).slice(0, 2000) })
  }
  const content = message.content ?? ''
  if (content) options.onDelta?.(content)
  const toolCalls = (message.tool_calls ?? []).map((c, i) => ({ id: c.id || `call_${i}`, name: c.function?.name ?? '',
    arguments: c.function?.arguments ?? '' }))
  return { content, toolCalls, model }
}

export interface Passage { text: string; fileName: string }

/** Sentences of a passage: split after . ! ? and at line breaks, trimmed, none empty. */
function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).map((x) => x.trim()).filter((x) => x.length > 0)
}

/**
 * The built-in assistant when no model is configured: finds the passages that best answer the question
 * (hybrid search) and quotes their best-matching sentences, cited by document name, saying it is the
 * extractive mode.
 */
export function extractiveModel(search: (query: string) => Promise<Passage[]>): LanguageModel {
  return {
    model: 'cairn-extractive',
    async complete(messages, options = {}) {
      const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? ''
      const wanted = new Set(queryTerms(question).flat().map(roughStem))
      const passages = question.trim() ? await search(question) : []
      // each sentence scores the distinct question words it holds; earlier (better) passages win ties
      const candidates = passages.flatMap((p, rank) => sentencesOf(p.text).map((sentence, at) => {
        const found = new Set((fold(sentence).match(/[\p{L}\p{N}]+/gu) ??
          []).map(roughStem).filter((w) => wanted.has(w)))
        return { sentence, fileName: p.fileName, score: found.size, rank, at }
      }))
      let best = candidates.filter((c) => c.score > 0).sort((a, b) => b.score - a.score || a.rank - b.rank ||
        a.at - b.at).slice(0, 3)
      if (best.length === 0 && passages.length > 0) best = candidates.filter((c) => c.rank === 0).slice(0, 2)
      const quote = (s: string) => (s.length > 400 ? s.slice(0, 400) + '…' : s)
      const intro = 'No language model is configured, so I am answering in extractive mode with passages from your ' +
        'knowledge base.'
      const content = best.length === 0
        ? `${intro} I found nothing matching your question.`
        : `${intro}\n\n${best.map((c, i) => `[${i + 1}] "${quote(c.sentence)}" (source: ${c.fileName})`).join('\n\n')}`
      for (const piece of content.match(/\S+\s*/g) ?? []) options.onDelta?.(piece)
      return { content, toolCalls: [], model: 'cairn-extractive' }
    }
  }
}

/** The configured model, or the extractive assistant (docs/api/assistant.md#models). */
export function modelFromConfig(llm: Config['llm'], search: (query: string) => Promise<Passage[]>): LanguageModel {
  return llm.baseUrl ? openAiModel(llm.baseUrl, llm.apiKey, llm.model ?? 'default') : extractiveModel(search)
}
