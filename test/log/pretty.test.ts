import t from 'tap'
import Fastify from 'fastify'
import { logFormat, prettyLine, prettyStream } from '../../src/log/pretty.js'
import { loggerOptions } from '../../src/app.js'
import { loadConfig, ConfigError } from '../../src/config.js'

const at = new Date(2026, 0, 2, 9, 5, 7).getTime()

t.test('a JSON line becomes a head line (time, level, message) and its fields, one per line', async (t) => {
  const line = JSON.stringify({ level: 40, time: at, pid: 1, hostname: 'h', msg: 'job test.x failed',
    jobId: 'j1', error: { message: 'fetch failed', code: 'ECONNREFUSED' }, tags: ['a', 'b'], empty: {} })
  t.equal(prettyLine(line), [
    '09:05:07 WARN  job test.x failed',
    '    jobId: j1',
    '    error.message: fetch failed',
    '    error.code: ECONNREFUSED',
    '    tags: ["a","b"]',
    '    empty: {}',
    ''
  ].join('\n'))
  const err = JSON.stringify({ level: 50, time: at, msg: 'could not start',
    err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (a.ts:1:1)' } })
  t.equal(prettyLine(err), [
    '09:05:07 ERROR could not start', '    err.type: Error', '    err.message: boom', '    err.stack:',
    '      Error: boom', '          at x (a.ts:1:1)', ''
  ].join('\n'), 'a stack keeps its lines')
  t.equal(prettyLine('not json at all'), 'not json at all\n', 'other lines pass through')
  t.equal(prettyLine('[1,2]\n'), '[1,2]\n')
  const esc = '\x1b['
  t.equal(prettyLine(JSON.stringify({ level: 30, time: at, msg: 'ready' }), { colors: true }),
    `${esc}2m09:05:07${esc}0m ${esc}32mINFO ${esc}0m ${esc}1mready${esc}0m\n`, 'colours on a terminal')
})

t.test('the service logger writes through the pretty stream', async (t) => {
  const out: string[] = []
  const app = Fastify({ logger: loggerOptions('info', prettyStream({ write: (s: string) => { out.push(s) } })) })
  app.get('/x', async () => ({}))
  await app.inject({ method: 'GET', url: '/x' })
  await app.close()
  const text = out.join('')
  t.match(text, /^\d\d:\d\d:\d\d INFO {2}incoming request\n {4}reqId: /m)
  t.match(text, /^\d\d:\d\d:\d\d INFO {2}request completed\n/m)
  t.notOk(text.includes('{"level"'), 'no JSON line left')
})

t.test('CAIRN_LOG_FORMAT: auto follows the terminal, json and pretty force one; anything else is refused',
  async (t) => {
    t.equal(loadConfig({}).logFormat, 'auto')
    t.equal(logFormat('auto', true), 'pretty')
    t.equal(logFormat('auto', false), 'json')
    t.equal(logFormat(loadConfig({ CAIRN_LOG_FORMAT: 'json' }).logFormat, true), 'json')
    t.equal(logFormat(loadConfig({ CAIRN_LOG_FORMAT: 'pretty' }).logFormat, false), 'pretty')
    t.throws(() => loadConfig({ CAIRN_LOG_FORMAT: 'xml' }), new ConfigError(
      ['CAIRN_LOG_FORMAT="xml" is invalid: expected one of auto, json, pretty']))
  })

t.test('text from outside cannot forge a line or reach the terminal: control characters are shown escaped',
  async (t) => {
    const line = JSON.stringify({ level: 50, time: 0, msg: 'boom\n10:00:00 INFO  all good \u001b[2K',
      err: { message: 'answer: \u009b31m red', stack: 'Error: x\n    at \u001b]0;title\u0007' }, ['k\u001bey']: 'v' })
    const text = prettyLine(line, { colors: false })
    t.equal(text.split('\n').filter((l) => /^\d\d:\d\d:\d\d /.test(l)).length, 1, 'one head line')
    t.notOk([...text].some((ch) => ch !== '\n' && (ch < ' ' || (ch >= '\x7f' && ch <= '\x9f'))),
      'no control character but the line breaks')
    t.match(text, 'boom\\u000a10:00:00 INFO  all good \\u001b[2K')
    t.match(text, 'err.message: answer: \\u009b31m red')
    t.match(text, '  at \\u001b]0;title\\u0007')
    t.match(text, 'k\\u001bey: v')
  })
