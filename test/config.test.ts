import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../src/config.js'
import { jwtSecretFor } from '../src/app.js'
import { tempDir } from './helper.js'

t.test('defaults (docs/self-hosting.md#configuration)', async (t) => {
  const c = loadConfig({})
  t.equal(c.host, '127.0.0.1')
  t.equal(c.port, 3000)
  t.equal(c.dataDir, path.resolve('./data'))
  t.equal(c.publicUrl, 'http://127.0.0.1:3000')
  t.equal(c.jwtSecret, undefined)
  t.equal(c.jwtTtlSeconds, 86400)
  t.equal(c.signup, 'first-user')
  t.same(c.rateLimits, { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 600 })
  t.equal(c.allowPrivateUrls, false)
  t.equal(c.stt.mode, 'auto')
  t.equal(c.stt.model, 'whisper-1')
  t.equal(c.serviceKey, undefined)
  t.equal(c.searchCacheMb, 64)
})

t.test('environment values are read and typed', async (t) => {
  const c = loadConfig({
    HOST: '0.0.0.0', PORT: '8080', CAIRN_PUBLIC_URL: 'https://cairn.example.org/', CAIRN_JWT_TTL: '3600',
    CAIRN_SIGNUP: 'open', CAIRN_RATE_LIMIT_KNOWLEDGE: '0', CAIRN_ALLOW_PRIVATE_URLS: 'true',
    CAIRN_LLM_BASE_URL: 'http://127.0.0.1:11434/v1', CAIRN_LLM_MODEL: 'llama3.2', CAIRN_STT: 'openai', CAIRN_SERVICE_KEY: 'a-long-service-key-value',
    CAIRN_SEARCH_CACHE_MB: '256'
  })
  t.equal(c.port, 8080)
  t.equal(c.publicUrl, 'https://cairn.example.org')
  t.equal(c.jwtTtlSeconds, 3600)
  t.equal(c.signup, 'open')
  t.equal(c.rateLimits.knowledge, 0)
  t.equal(c.allowPrivateUrls, true)
  t.equal(c.llm.baseUrl, 'http://127.0.0.1:11434/v1')
  t.equal(c.stt.mode, 'openai')
  t.equal(c.serviceKey, 'a-long-service-key-value')
  t.equal(c.searchCacheMb, 256)
})

t.test('invalid values are refused at start', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }))
  t.throws(() => loadConfig({ CAIRN_SIGNUP: 'sometimes' }))
  t.throws(() => loadConfig({ CAIRN_STT: 'magic' }))
  t.throws(() => loadConfig({ CAIRN_JWT_SECRET: 'short' }))
  t.throws(() => loadConfig({ CAIRN_SEARCH_CACHE_MB: '-1' }))
  t.throws(() => loadConfig({ CAIRN_SEARCH_CACHE_MB: 'lots' }))
  // never ignored: a process that did would answer from a database of its own
  t.throws(() => loadConfig({ CAIRN_DATABASE_URL: 'postgres://cairn@db.example/cairn' }),
    /CAIRN_DATABASE_URL is set, but this version of Cairn keeps its data only in the embedded SQLite database/)
  t.equal(loadConfig({ CAIRN_DATABASE_URL: '' }).dataDir, loadConfig({}).dataDir, 'empty is unset')
})

t.test('JWT secret: generated once, kept, reused', async (t) => {
  const dir = tempDir(t)
  const c = loadConfig({ CAIRN_DATA_DIR: dir })
  const first = jwtSecretFor(c)
  t.ok(first.length >= 43)
  t.equal(jwtSecretFor(c), first, 'the same secret after a restart')
  t.equal(fs.statSync(path.join(dir, 'jwt-secret')).mode & 0o777, 0o600)
  t.equal(jwtSecretFor({ ...c, jwtSecret: 'configured-secret-value' }), 'configured-secret-value')
})
