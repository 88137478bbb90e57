import type { Config } from '../config.js'
import { describeError, maskSecrets } from '../log/mask.js'
import fs from 'node:fs'
import path from 'node:path'

/** What a start found of an outside service: it answers, it is not set up (off), or it is set up and fails. */
export interface ServiceState {
  state: 'answers' | 'off' | 'fails'
  /** one line for people: what is used, then "answers" or why not */
  text: string
}

export interface ServiceReport {
  languageModel: ServiceState
  embedder: ServiceState
  speech: ServiceState
}

/** how long a start waits for each service's answer: a slow one is reported as such, the start goes on */
export const PROBE_TIMEOUT_MS = 3000

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified'
}

/** A base URL as the log may show it: no query values that could be keys. */
function shown(url: string): string {
  return maskSecrets(url.replace(/\/+$/, ''))
}

/**
 * An AbortSignal that fires once `ms` have passed with this process's event loop free to hear the answer: time the
 * loop spends blocked (a start's migrations, a busy machine) is not charged to the server asked, so a slow start
 * never reports a service that answered in time as silent.
 */
export function responsiveTimeout(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController()
  const step = Math.min(100, ms)
  let left = ms
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    // a tick that comes late was held up by the loop: no more than two steps are charged for it
    left -= Math.min(now - last, 2 * step)
    last = now
    if (left <= 0) {
      clearInterval(timer)
      controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'))
    }
  }, step)
  timer.unref()
  return { signal: controller.signal, clear: () => clearInterval(timer) }
}

/** Ollama lists `llama3.2:latest` for a model configured as `llama3.2`. */
function listed(ids: string[], model: string): boolean {
  return ids.some((id) => id === model || id === `${model}:latest` || id.replace(/^models\//, '') === model)
}

/**
 * One GET of an OpenAI-compatible server's `/models` (Ollama, llama.cpp, vLLM, LM Studio, LocalAI, OpenAI): it
 * answers, it refuses the key, it does not list the model, or it cannot be reached (and why). A server without
 * that route (404) still answers.
 */
export async function probeOpenAiServer(baseUrl: string, apiKey: string | undefined, model: string | undefined,
  timeoutMs = PROBE_TIMEOUT_MS): Promise<{ state: 'answers' | 'fails'; detail: string }> {
  const timeout = responsiveTimeout(timeoutMs)
  let res: Response
  let body: string
  try {
    res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: timeout.signal,
      redirect: 'manual'
    })
    body = await res.text()
  } catch (err) {
    if (timeout.signal.aborted) return { state: 'fails', detail: `does not answer within ${timeoutMs / 1000} s` }
    const { code, message } = describeError(err, apiKey ? [apiKey] : [])
    return { state: 'fails', detail: `does not answer (${(code && NETWORK_CODES[code]) ?? message})` }
  } finally {
    timeout.clear()
  }
  if (res.status === 401 || res.status === 403) {
    const detail = apiKey ? `refuses the API key (${res.status})` : `asks for an API key (${res.status})`
    return { state: 'fails', detail }
  }
  if (res.status === 404 || res.status === 405) return { state: 'answers', detail: 'answers' }
  if (!res.ok) return { state: 'fails', detail: `answers with an error (${res.status})` }
  if (!model) return { state: 'answers', detail: 'answers' }
  let ids: string[] | undefined
  try {
    const data = (JSON.parse(body) as { data?: Array<{ id?: unknown }> }).data
    if (Array.isArray(data)) ids = data.map((m) => m.id).filter((id): id is string => typeof id === 'string')
  } catch { /* not a model list: the server answered, which is what is asked */ }
  if (!ids || ids.length === 0 || listed(ids, model)) return { state: 'answers', detail: 'answers' }
  const some = ids.slice(0, 5).join(', ') + (ids.length > 5 ? ', …' : '')
  return { state: 'fails', detail: `answers, but does not have the model ${model} (it has: ${some})` }
}

async function languageModel(config: Config, timeoutMs: number): Promise<ServiceState> {
  const { baseUrl, apiKey, model } = config.llm
  if (!baseUrl || !model) {
    return { state: 'off', text: 'not configured (set CAIRN_LLM_BASE_URL and CAIRN_LLM_MODEL): chat, agents and ' +
      'workflow steps that ask a model are off' }
  }
  const probe = await probeOpenAiServer(baseUrl, apiKey, model, timeoutMs)
  return { state: probe.state, text: `${model} at ${shown(baseUrl)}: ${probe.detail}` }
}

async function embedder(config: Config, timeoutMs: number): Promise<ServiceState> {
  const { baseUrl, apiKey, model } = config.embeddings
  if (!baseUrl || !model) {
    return { state: 'off', text: 'not configured (set CAIRN_EMBED_BASE_URL and CAIRN_EMBED_MODEL): semantic search ' +
      'is off, keyword search works' }
  }
  const probe = await probeOpenAiServer(baseUrl, apiKey, model, timeoutMs)
  return { state: probe.state, text: `${model} at ${shown(baseUrl)}: ${probe.detail}` }
}

const POCKETSPHINX_PACKAGES = 'apt install pocketsphinx pocketsphinx-en-us ffmpeg'

/** an executable named `program` in one of the `searchPath` directories (as spawn would find it) */
function onPath(program: string, searchPath: string): boolean {
  return searchPath.split(path.delimiter).some((dir) => {
    if (!dir) return false
    try {
      fs.accessSync(path.join(dir, program), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

async function speech(config: Config, timeoutMs: number, searchPath: string): Promise<ServiceState> {
  const stt = config.stt
  if (stt.mode === 'none') return { state: 'off', text: 'off (CAIRN_STT=none): voice notes are kept untranscribed' }
  if (stt.mode === 'openai' || (stt.mode === 'auto' && stt.baseUrl)) {
    if (!stt.baseUrl) return { state: 'fails', text: 'CAIRN_STT=openai needs CAIRN_STT_BASE_URL' }
    const probe = await probeOpenAiServer(stt.baseUrl, stt.apiKey, undefined, timeoutMs)
    return { state: probe.state, text: `${stt.model} at ${shown(stt.baseUrl)}: ${probe.detail}` }
  }
  const missing = ['pocketsphinx_continuous', 'ffmpeg'].filter((p) => !onPath(p, searchPath))
  if (stt.mode === 'pocketsphinx' || missing.length < 2) {
    if (missing.length === 0) return { state: 'answers', text: 'pocketsphinx (installed with ffmpeg): answers' }
    return { state: 'fails', text: `pocketsphinx: ${missing.join(' and ')} not installed (${POCKETSPHINX_PACKAGES})` }
  }
  return { state: 'off', text: 'none: voice notes are kept untranscribed (set CAIRN_STT_BASE_URL to a whisper ' +
    `server, or ${POCKETSPHINX_PACKAGES})` }
}

/**
 * The language model, embedder and speech engine the configuration names, each asked once (at most `timeoutMs`,
 * side by side). `searchPath`: where pocketsphinx and ffmpeg are looked for (default PATH, as spawn looks).
 */
export async function probeServices(config: Config,
  options: { timeoutMs?: number; searchPath?: string } = {}): Promise<ServiceReport> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const searchPath = options.searchPath ?? process.env.PATH ?? ''
  const [lm, emb, stt] = await Promise.all([languageModel(config, timeoutMs), embedder(config, timeoutMs),
    speech(config, timeoutMs, searchPath)])
  return { languageModel: lm, embedder: emb, speech: stt }
}
