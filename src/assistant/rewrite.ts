import type { LanguageModel } from '../ai/llm.js'
import type { SearchHit } from '../knowledge/search.js'

/**
 * Query rewriting for the assistant's own `search_knowledge` calls (docs/api/assistant.md, "Agents"): one short
 * model call turns the question into key terms and synonyms, so that a passage written in other words than the
 * question is found too. Only the assistant's tool calls use it: the knowledge routes, unified search, workflow
 * steps and MCP tools search with what they are given and never wait on a model.
 */

/** the instruction of the rewrite call: terms on one line, nothing else, so the answer is a query as it is */
export const REWRITE_PROMPT = 'You turn a question into search terms for a keyword search over a person\'s own ' +
  'documents. Reply with one line of at most 15 words: the key terms of the question, then synonyms and related ' +
  'words that a document answering it would use. No sentences, no explanations, no quotes, no numbering.'

/** tokens the rewrite may answer with: 15 words and some slack; a model that goes on is cut here */
export const REWRITE_MAX_TOKENS = 48

/** characters of rewritten terms searched, at most */
const MAX_TERMS_CHARS = 300

/**
 * The search terms in a model's answer: without reasoning blocks (`<think>…</think>`, which some local models
 * write first), the first line that holds words, without a label ("Search terms:"), list marks or quotes, at
 * most MAX_TERMS_CHARS characters; empty when nothing is left.
 */
export function termsOf(answer: string): string {
  const text = answer.replace(/<think>[\s\S]*?(<\/think>|$)/gi, '')
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => /[\p{L}\p{N}]/u.test(l)) ?? ''
  return line
    .replace(/^(?:[-*•]|\d+[.)])\s+/, '')
    .replace(/^(?:search\s+)?(?:terms|keywords|query)\s*:\s*/i, '')
    .replace(/["“”«»`]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_TERMS_CHARS)
    .trim()
}

/**
 * The question's search terms from the model, or the reason it gave none (thrown: the caller searches with the
 * question as asked). `signal` is the caller's (a client that goes away); `timeoutMs` bounds this call alone.
 */
export async function rewriteQuery(model: LanguageModel, question: string,
  options: { timeoutMs: number; signal?: AbortSignal }): Promise<string> {
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMs),
    ...(options.signal ? [options.signal] : [])])
  const answer = await model.complete([{ role: 'system', content: REWRITE_PROMPT },
    { role: 'user', content: question }], { signal, maxTokens: REWRITE_MAX_TOKENS, temperature: 0 })
  return termsOf(answer.content)
}

/** the rank constant of reciprocal rank fusion (Cormack et al. 2009): ranks matter, scores of each list do not */
const RRF_K = 60

/**
 * Passages of several searches as one list: each passage scores the sum of 1 / (RRF_K + rank) over the lists it is
 * in, so a passage both searches found comes first; ties keep the order of the first list, then of the next.
 */
export function fuseHits(lists: SearchHit[][], limit: number): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; score: number; order: number }>()
  let order = 0
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.chunk.id)
      if (entry) entry.score += 1 / (RRF_K + rank + 1)
      else fused.set(hit.chunk.id, { hit, score: 1 / (RRF_K + rank + 1), order: order++ })
    })
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.order - b.order).slice(0, limit)
    .map((e) => e.hit)
}
