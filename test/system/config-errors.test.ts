import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { checkDataDir, ConfigError, loadConfig } from '../../src/config.js'
import { tempDir, ROOT, TS_CHILD } from '../helper.js'

const root = ROOT

function problems(env: Record<string, string>): string[] {
  return problemsOf(() => loadConfig(env))
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn()
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  return []
}

t.test('one line per bad variable, naming it and what it accepts', async (t) => {
  const lines = problems({ PORT: 'eighty', CAIRN_SIGNUP: 'sometimes', CAIRN_STT: 'magic', CAIRN_JWT_SECRET: 'short',
    CAIRN_ALLOW_PRIVATE_URLS: 'maybe' })
  t.equal(lines.length, 5)
  t.match(lines, [
    'PORT="eighty" is invalid: expected an integer from 0 to 65535',
    'CAIRN_JWT_SECRET="short" is invalid: expected a string of at least 16 characters',
    'CAIRN_SIGNUP="sometimes" is invalid: expected one of first-user, open',
    'CAIRN_ALLOW_PRIVATE_URLS="maybe" is invalid: expected true or false',
    'CAIRN_STT="magic" is invalid: expected one of auto, openai, pocketsphinx, none'
  ])
})

t.test('service URLs must be http(s) URLs at start; a model is named with a model server', async (t) => {
  const lines = problems({
    CAIRN_LLM_BASE_URL: 'localhost:11434/v1', CAIRN_LLM_MODEL: 'x', CAIRN_STT_BASE_URL: 'ftp://stt.example/v1',
    CAIRN_EMBED_BASE_URL: 'not a url', CAIRN_WEB_SEARCH_URL: 'https://user:pw@search.example'
  })
  t.equal(lines.length, 4)
  t.match(lines[0],
    /^CAIRN_LLM_BASE_URL="localhost:11434\/v1" has the scheme localhost: expected an http:\/\/ or https:\/\/ URL$/)
  t.match(lines[1], /^CAIRN_STT_BASE_URL=.*has the scheme ftp/)
  t.match(lines[2], /^CAIRN_EMBED_BASE_URL="not a url" is not a URL/)
  t.match(lines[3], /^CAIRN_WEB_SEARCH_URL=.*carries credentials/)
  t.same(problems({ CAIRN_LLM_BASE_URL: 'http://127.0.0.1:11434/v1', CAIRN_LLM_MODEL: 'llama3.2', CAIRN_WEB_SEARCH_URL: 'https://searx.example/' }), [])
  t.match(problems({ CAIRN_LLM_BASE_URL: 'http://127.0.0.1:11434/v1' }), [/^CAIRN_LLM_MODEL is unset/])
})

t.test('CORS origins: comma-separated bare origins', async (t) => {
  t.same(loadConfig({}).corsOrigins, [])
  t.same(loadConfig({ CAIRN_CORS_ORIGINS: 'https://app.example.org, http://localhost:5173' }).corsOrigins, ['https://app.example.org', 'http://localhost:5173'])
  t.match(problems({ CAIRN_CORS_ORIGINS: 'https://app.example.org/path' }), [/CAIRN_CORS_ORIGINS: "https:\/\/app.example.org\/path" is not a bare origin/])
  t.match(problems({ CAIRN_CORS_ORIGINS: '*' }), [/CAIRN_CORS_ORIGINS: "\*" is not a URL/])
})

t.test('a data dir that is not a usable directory is named with what is missing', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'plain-file')
  fs.writeFileSync(file, '')
  t.same(problemsOf(() => checkDataDir(file)), [`CAIRN_DATA_DIR=${JSON.stringify(file)} is not a directory`])
  t.match(problemsOf(() => checkDataDir(path.join(file, 'below'))), [/is not a directory/])
  checkDataDir(path.join(dir, 'new', 'data'))
  t.ok(fs.statSync(path.join(dir, 'new', 'data')).isDirectory(), 'a missing dir is created')
  t.same(fs.readdirSync(path.join(dir, 'new', 'data')), [], 'the probe leaves nothing behind')
  const readOnly = path.join(dir, 'read-only')
  fs.mkdirSync(readOnly, { mode: 0o500 })
  if (process.getuid?.() === 0) {
    t.comment('running as root: file modes do not stop writes, so the read-only case is not checked here')
  } else {
    t.match(problemsOf(() => checkDataDir(readOnly)),
      [/is not writable: the user running Cairn \(uid \d+\) needs read, write and execute permission/])
  }
})

t.test('the server prints the problems, one per line, without a stack trace, and exits 1', async (t) => {
  const child = spawn(process.execPath, [...TS_CHILD, path.join(root, 'src', 'server.ts')], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '99999', CAIRN_SIGNUP: 'sometimes',
      CAIRN_DATA_DIR: tempDir(t) },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (c) => { stderr += c })
  const code = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(code, 1)
  t.equal(stderr, 'Cairn cannot start: settings are invalid\n' +
    '  PORT="99999" is invalid: expected an integer from 0 to 65535\n' +
    '  CAIRN_SIGNUP="sometimes" is invalid: expected one of first-user, open\n')
})
