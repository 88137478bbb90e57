import t, { type Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { build, closedPort, tempDir } from '../helper.js'
import { fakeLlm } from '../fake-llm.js'
import { fakeEmbeddings } from '../fake-embeddings.js'
import { fakeStt } from '../fake-stt.js'
import { loadConfig, type Config } from '../../src/config.js'
import { probeServices, probeOpenAiServer } from '../../src/startup/probes.js'
import { startupSummary } from '../../src/startup/summary.js'

/** An HTTP server answering every request with `status` and `body`, or never (`status` undefined). */
async function server(t: Test, status?: number, body = '') {
  const seen: Array<string | undefined> = []
  const s = http.createServer((req, res) => {
    seen.push(req.headers.authorization)
    if (status === undefined) return
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(body)
  })
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  t.teardown(() => { s.closeAllConnections(); s.close() })
  return { url: `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/v1`, seen }
}

const base = (env: Record<string, string> = {}): Config => loadConfig({ CAIRN_DATA_DIR: '/tmp/unused', ...env })

t.test('every service up: the model server lists the model, the embedder and the speech server answer',
  async (t) => {
    const llm = await fakeLlm(t, { models: ['llama3.2:latest', 'qwen2.5:7b'] })
    const embed = await fakeEmbeddings(t, { 'nomic-embed-text': 8 })
    const stt = await fakeStt(t)
    const config = base({ CAIRN_LLM_BASE_URL: llm.baseUrl, CAIRN_LLM_MODEL: 'llama3.2',
      CAIRN_LLM_API_KEY: 'llm-secret-1', CAIRN_EMBED_BASE_URL: embed.url, CAIRN_EMBED_MODEL: 'nomic-embed-text',
      CAIRN_STT_BASE_URL: stt.baseUrl, CAIRN_STT_MODEL: 'whisper-1' })
    const report = await probeServices(config)
    t.same(report, {
      languageModel: { state: 'answers', text: `llama3.2 at ${llm.baseUrl}: answers` },
      embedder: { state: 'answers', text: `nomic-embed-text at ${embed.url}: answers` },
      speech: { state: 'answers', text: `whisper-1 at ${stt.baseUrl}: answers` }
    })
    t.equal(llm.requests.length, 0, 'nothing is asked of the model: only its list')
    t.equal(embed.requests.length, 0, 'nothing is embedded')
    t.equal(stt.calls.length, 0, 'nothing is transcribed')
  })

t.test('a closed port, a refused key, a missing model and a silent server are each said, no secret shown',
  async (t) => {
    const port = await closedPort()
    const closed = `http://127.0.0.1:${port}/v1`
    const refusing = await server(t, 401, '{"error":{"message":"invalid api key"}}')
    const llm = await fakeLlm(t, { models: ['qwen2.5:7b', 'a', 'b', 'c', 'd', 'e'] })
    const silent = await server(t)

    t.same(await probeServices(base({ CAIRN_LLM_BASE_URL: closed, CAIRN_LLM_MODEL: 'llama3.2',
      CAIRN_EMBED_BASE_URL: closed, CAIRN_EMBED_MODEL: 'nomic-embed-text', CAIRN_STT: 'openai',
      CAIRN_STT_BASE_URL: closed })), {
      languageModel: { state: 'fails', text: `llama3.2 at ${closed}: does not answer (connection refused)` },
      embedder: { state: 'fails', text: `nomic-embed-text at ${closed}: does not answer (connection refused)` },
      speech: { state: 'fails', text: `whisper-1 at ${closed}: does not answer (connection refused)` }
    })

    const key = 'embed-secret-key-42'
    t.same(await probeOpenAiServer(refusing.url, key, 'm'), { state: 'fails', detail: 'refuses the API key (401)' })
    t.same(refusing.seen, [`Bearer ${key}`], 'the configured key is sent, as the real requests send it')
    t.same(await probeOpenAiServer(refusing.url, undefined, 'm'),
      { state: 'fails', detail: 'asks for an API key (401)' })
    t.same(await probeOpenAiServer(llm.baseUrl, undefined, 'llama3.2'),
      { state: 'fails', detail: 'answers, but does not have the model llama3.2 (it has: qwen2.5:7b, a, b, c, d, …)' })
    t.same(await probeOpenAiServer(silent.url, undefined, 'm', 150),
      { state: 'fails', detail: 'does not answer within 0.15 s' })
    const broken = await server(t, 500, 'boom')
    t.same(await probeOpenAiServer(broken.url, undefined, 'm'),
      { state: 'fails', detail: 'answers with an error (500)' })
  })

t.test('services not configured are off with what to set; pocketsphinx is looked for on the path', async (t) => {
  const none = await probeServices(base({ CAIRN_STT: 'none' }))
  t.match(none, {
    languageModel: { state: 'off', text: /^not configured \(set CAIRN_LLM_BASE_URL and CAIRN_LLM_MODEL\)/ },
    embedder: { state: 'off', text: /^not configured \(set CAIRN_EMBED_BASE_URL and CAIRN_EMBED_MODEL\): semantic/ },
    speech: { state: 'off', text: /^off \(CAIRN_STT=none\)/ }
  })
  const empty = tempDir(t)
  t.match((await probeServices(base(), { searchPath: empty })).speech,
    { state: 'off', text: /^none: voice notes are kept untranscribed \(set CAIRN_STT_BASE_URL/ })
  t.same((await probeServices(base({ CAIRN_STT: 'pocketsphinx' }), { searchPath: empty })).speech,
    { state: 'fails', text: 'pocketsphinx: pocketsphinx_continuous and ffmpeg not installed (apt install ' +
      'pocketsphinx pocketsphinx-en-us ffmpeg)' })
  // programs on the path (what is looked for is an executable of that name, as spawn finds it)
  const bin = tempDir(t)
  fs.writeFileSync(path.join(bin, 'pocketsphinx_continuous'), '#!/bin/sh\n', { mode: 0o755 })
  t.same((await probeServices(base(), { searchPath: bin })).speech,
    { state: 'fails', text: 'pocketsphinx: ffmpeg not installed (apt install pocketsphinx pocketsphinx-en-us ffmpeg)' })
  fs.writeFileSync(path.join(bin, 'ffmpeg'), '#!/bin/sh\n', { mode: 0o755 })
  t.same((await probeServices(base(), { searchPath: `${empty}${path.delimiter}${bin}` })).speech,
    { state: 'answers', text: 'pocketsphinx (installed with ffmpeg): answers' })
})

t.test('the summary names each part with "answers" or why not, warns when one fails, and shows no secret',
  async (t) => {
    const app = await build(t)
    const llm = await fakeLlm(t, { models: ['llama3.2'] })
    const closed = `http://127.0.0.1:${await closedPort()}/v1`
    const config: Config = { ...app.config, publicUrl: 'https://cairn.example.org',
      llm: { baseUrl: llm.baseUrl, apiKey: 'llm-secret-value', model: 'llama3.2' },
      embeddings: { baseUrl: closed, apiKey: 'embed-secret-value', model: 'nomic-embed-text' },
      stt: { mode: 'none', model: 'whisper-1' } }
    const services = await probeServices(config)
    const address = { address: '127.0.0.1', family: 'IPv4', port: 3000 }
    const summary = startupSummary(config, app.sqlite, address, services,
      { documents: 0, audio: 0, voiceNotes: 0, examples: { documents: [], audio: [] } })
    t.equal(summary.level, 'warn')
    t.equal(summary.message, 'Cairn is ready at https://cairn.example.org; needs attention: the embedder')
    t.match(summary.fields, {
      url: 'https://cairn.example.org (listening on 127.0.0.1:3000)',
      dataDir: new RegExp(`^${config.dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, [\\d.]+ [KMG]B free$`),
      database: /^SQLite 3\.\d+\.\d+ at .*cairn\.db \([\d.]+ [KMG]B\): answers$/,
      languageModel: `llama3.2 at ${llm.baseUrl}: answers`,
      embedder: `nomic-embed-text at ${closed}: does not answer (connection refused)`,
      speech: /^off \(CAIRN_STT=none\)/,
      storedFiles: 'every stored file is present'
    })
    const text = JSON.stringify(summary)
    t.notOk(text.includes('secret-value'), 'API keys are never in the summary')

    const fine = startupSummary({ ...config, embeddings: {} }, app.sqlite, address, { ...services,
      embedder: { state: 'off', text: 'not configured' } })
    t.equal(fine.level, 'info', 'a service left off is not a failure')
    t.equal(fine.message, 'Cairn is ready at https://cairn.example.org')
    t.equal(fine.fields.storedFiles, 'still being checked (a warning follows if any is missing)')
  })

t.test('the probe\'s time limit counts only time the event loop was free to hear the answer', async (t) => {
  const { responsiveTimeout } = await import('../../src/startup/probes.js')
  const timeout = responsiveTimeout(1000)
  t.teardown(() => timeout.clear())
  // the loop held longer than the whole limit (as a start's migrations hold it): at most two steps are charged
  const until = performance.now() + 1200
  while (performance.now() < until) { /* held */ }
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.notOk(timeout.signal.aborted, 'a blocked loop is not the server\'s silence')
  // the limit's own timer does not hold the process open (a probe's request does): this wait does
  const keepAlive = setInterval(() => {}, 1000)
  await new Promise((resolve) => timeout.signal.addEventListener('abort', resolve))
  clearInterval(keepAlive)
  t.equal((timeout.signal.reason as DOMException).name, 'TimeoutError', 'with free turns the limit comes')
})
