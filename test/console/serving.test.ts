import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import Fastify from 'fastify'
import { build, tempDir } from '../helper.js'
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
