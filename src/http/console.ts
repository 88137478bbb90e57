import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { notFoundHandler } from './errors.js'

/**
 * The web console (console/, built by Vite into dist/console): served by the service itself at `/`.
 *
 * Built files are answered as they are; hashed assets (`/assets/…`) are cached for a year, the page itself is
 * revalidated on every load. Any other GET below `/` that names no file is a route of the console: it gets the
 * page, which shows it. The API (`/api`), `/metrics` and the health endpoints are never answered with the page:
 * there an unknown path stays the API's JSON 404. The page and its files carry a strict Content-Security-Policy:
 * scripts and styles only from this origin, no inline script, no framing by other sites.
 */
export const CONSOLE_CSP = [
  "default-src 'self'", "base-uri 'none'", "object-src 'none'", "frame-ancestors 'none'", "form-action 'self'",
  "script-src 'self'", "script-src-attr 'none'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'"
].join('; ')

/** Paths that belong to the API and never fall back to the page. */
const API_PATH = /^\/(api|metrics|health)(\/|$)/

/** Where the built console is: dist/console of the project, from src/http or from its compiled dist/src/http. */
export function defaultConsoleDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  return path.join(dir, 'dist', 'console')
}

function consoleHeaders(reply: FastifyReply) {
  reply.header('content-security-policy', CONSOLE_CSP)
  reply.header('referrer-policy', 'same-origin')
  reply.header('x-frame-options', 'DENY')
}

async function consolePlugin(app: FastifyInstance, opts: { dir?: string }) {
  const dir = opts.dir ?? defaultConsoleDir()
  const built = fs.existsSync(path.join(dir, 'index.html'))
  // only the reply.sendFile decorator: the console adds no route of its own (the API's route table stays the API's)
  await app.register(fastifyStatic, { root: built ? dir : process.cwd(), serve: false })

  // the not-found handler: the console's files and routes, else the API's JSON 404
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url.split('?')[0]
    if ((request.method !== 'GET' && request.method !== 'HEAD') || API_PATH.test(url)) {
      return notFoundHandler(request, reply)
    }
    consoleHeaders(reply)
    if (!built) {
      reply.code(503).type('text/plain; charset=utf-8').header('cache-control', 'no-store')
      return reply.send('The console has not been built: `npm start` builds it (or `npm run console:build`).\n')
    }
    let file: string
    try {
      file = decodeURIComponent(url).replace(/^\/+/, '')
    } catch {
      return notFoundHandler(request, reply)
    }
    if (file.includes('\0') || file.split('/').includes('..')) return notFoundHandler(request, reply)
    const stat = file === '' ? undefined : fs.statSync(path.join(dir, file), { throwIfNoEntry: false })
    if (stat?.isFile() && file !== 'index.html') {
      const hashed = file.startsWith('assets/')
      return reply.sendFile(file, dir, hashed
        ? { maxAge: '365d', immutable: true }
        : { maxAge: 0 })
    }
    // a file name that does not exist (a missing script) is a 404, not the page
    if (/\.[a-z0-9]+$/i.test(file) && !stat) return notFoundHandler(request, reply)
    reply.header('cache-control', 'no-cache')
    return reply.sendFile('index.html', dir, { cacheControl: false })
  })
}

export default fp(consolePlugin, { name: 'cairn-console' })
