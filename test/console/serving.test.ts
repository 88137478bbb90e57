import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { spawnSync } from 'node:child_process'
import Fastify from 'fastify'
import { build, ROOT, tempDir } from '../helper.js'
import webConsole, { CONSOLE_CSP } from '../../src/http/console.js'
import { consoleBuilt } from './built.js'

t.test('the console at /: its page, hashed assets, client-side routes; the API never falls back', async (t) => {
  const dir = await consoleBuilt()
  const app = await build(t)
  const page = await app.inject({ url: '/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers['content-security-policy'], CONSOLE_CSP)
  t.match(CONSOLE_CSP, /default-src 'self'/)
  t.notMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/, 'no inline script, no eval')
  t.equal(page.headers['cache-control'], 'no-cache', 'the page is revalidated: a new release is seen at once')
  t.equal(page.headers['x-content-type-options'], 'nosniff')
  t.notMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page')
  t.match(page.body, /<noscript>[^<]*needs JavaScript/, 'without JavaScript, one line says so')

  for (const route of ['/review', '/artifacts/0b7f6c1e-1111-4222-8333-944455556666', '/settings?x=1', '/a/b/c']) {
    const res = await app.inject({ url: route })
    t.equal(res.statusCode, 200, `${route}: the page`)
    t.equal(res.body, page.body)
  }
  t.equal((await app.inject({ method: 'HEAD', url: '/review' })).statusCode, 200)

  const scripts = [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1])
  t.ok(scripts.some((s) => s.endsWith('.js')), 'a hashed script')
  let gzipped = 0
  for (const asset of scripts) {
    const res = await app.inject({ url: asset })
    t.equal(res.statusCode, 200, asset)
    t.match(res.headers['cache-control'], /max-age=31536000.*immutable|immutable.*max-age=31536000/,
      `${asset}: cached for a year`)
    t.equal(res.headers['content-security-policy'], CONSOLE_CSP)
    if (asset.endsWith('.js')) gzipped += gzipSync(fs.readFileSync(path.join(dir, asset))).length
  }
  t.ok(gzipped <= 200 * 1024, `the first page's JavaScript is ${(gzipped / 1024).toFixed(1)} KB gzip (≤ 200)`)

  for (const url of ['/api/nothing-here', '/api/v2/nothing', '/metrics/x', '/health', '/health/ready', '/api']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 404, `${url}: the API's 404`)
    t.equal(res.json().code, 'NOT_FOUND')
  }
  const post = await app.inject({ method: 'POST', url: '/review', payload: {} })
  t.equal(post.statusCode, 404, 'only GET and HEAD get the page')
  t.equal((await app.inject({ url: '/assets/missing-abc123.js' })).statusCode, 404, 'a missing file is no page')
  for (const url of ['/..%2fpackage.json', '/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json', '/%E0%A4%A']) {
    const res = await app.inject({ url })
    t.not(res.statusCode, 500, url)
    t.notMatch(res.body, /"name": "cairn"/, `${url}: nothing outside the console's folder`)
  }
})

t.test('before the console is built: one line that says how, the API unchanged', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(webConsole, { dir: tempDir(t) })
  app.get('/api/health', async () => ({ ok: true }))
  const res = await app.inject({ url: '/review' })
  t.equal(res.statusCode, 503)
  t.match(res.body, /npm start/)
  t.equal((await app.inject({ url: '/api/x' })).statusCode, 404)
  t.equal((await app.inject({ url: '/api/health' })).statusCode, 200)
})

t.test('npm start builds the console when it is missing or its sources or the client changed, and only then',
  async (t) => {
    // scripts/start.mjs in a project of stand-ins: Vite and tsc record that they ran, the server says it started
    const dir = tempDir(t)
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      fs.writeFileSync(path.join(dir, file), text)
    }
    write('scripts/start.mjs', fs.readFileSync(path.join(ROOT, 'scripts', 'start.mjs'), 'utf8'))
    write('package.json', '{"name":"probe","type":"module"}')
    write('console/src/main.tsx', 'export {}\n')
    write('console/vite.config.ts', 'export default {}\n')
    write('clients/typescript/src/client.ts', 'export {}\n')
    write('src/server.ts', 'export {}\n')
    const ran = (name: string) => `import fs from 'node:fs'\nfs.appendFileSync(${JSON.stringify(path.join(dir,
      'ran.log'))}, ${JSON.stringify(`${name}\n`)})\n`
    write('node_modules/vite/bin/vite.js', `${ran('vite')}fs.mkdirSync(${JSON.stringify(path.join(dir, 'dist',
      'console'))}, { recursive: true })\nfs.writeFileSync(${JSON.stringify(path.join(dir, 'dist', 'console',
      'index.html'))}, '<!doctype html>')\n`)
    write('node_modules/typescript/bin/tsc', ran('tsc'))
    write('dist/src/server.js', ran('server'))
    write('dist/src/cli/backup.js', ran('backup'))
    // every source (and its folders) last changed long ago
    const age = (p: string, when: Date) => {
      const full = path.join(dir, p)
      if (fs.statSync(full).isDirectory()) for (const name of fs.readdirSync(full)) age(path.join(p, name), when)
      fs.utimesSync(full, when, when)
    }
    const old = new Date('2020-01-01T00:00:00Z')
    for (const p of ['package.json', 'console', 'clients', 'src']) age(p, old)
    const start = (...args: string[]) => {
      fs.rmSync(path.join(dir, 'ran.log'), { force: true })
      // without the tests' NODE_OPTIONS (their TypeScript loader): plain node, as npm start runs it
      const r = spawnSync(process.execPath, [path.join(dir, 'scripts', 'start.mjs'), ...args], { cwd: dir,
        encoding: 'utf8', env: { PATH: process.env.PATH } })
      t.equal(r.status, 0, r.stderr)
      return fs.readFileSync(path.join(dir, 'ran.log'), 'utf8').trim().split('\n')
    }

    t.same(start(), ['vite', 'server'], 'not built yet: built, then the server')
    t.same(start(), ['server'], 'unchanged: not built again')
    // built a while ago, a source changed since
    const builtThen = new Date('2020-06-01T00:00:00Z')
    const changed = new Date('2021-01-01T00:00:00Z')
    const change = (file: string) => {
      fs.utimesSync(path.join(dir, 'dist', 'console', 'index.html'), builtThen, builtThen)
      fs.utimesSync(path.join(dir, file), changed, changed)
    }
    change('console/src/main.tsx')
    t.same(start(), ['vite', 'server'], 'a console source changed: built again')
    t.same(start(), ['server'])
    change('clients/typescript/src/client.ts')
    t.same(start(), ['vite', 'server'], 'the client library changed: built again')
    write('console/src/new-page.tsx', 'export {}\n')
    t.same(start('src/cli/backup'), ['backup'], 'another entry point does not build the console')
    t.same(start(), ['vite', 'server'], 'a new console file: built again')
  })
