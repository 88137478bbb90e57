import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { parse } from 'yaml'
import { ROOT } from '../helper.js'
import { loadConfig } from '../../src/config.js'

// Docker cannot build here (no registry beyond npm and Debian): what running the image relies on is read from the
// files themselves
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
const runtime = dockerfile.split(/^FROM /m).slice(1)[1]
/** the Dockerfile's instructions, continuation lines joined */
const instructions = runtime.replace(/\\\n/g, ' ').split('\n').filter((l) => l && !l.startsWith('#'))
interface Service { image?: string; init?: boolean; stop_grace_period?: string; environment?: Record<string, string>
  depends_on?: Record<string, { condition?: string }>; healthcheck?: { test?: string[] } }
const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as { services: Record<string, Service> }

/** a Compose duration (`30s`, `1m30s`, `2m`) in seconds */
function seconds(duration: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(duration)
  if (!m || duration === '') throw new Error(`not a duration: ${duration}`)
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
}

t.test('an init process as PID 1 reaps what the service spawns (ffmpeg, pocketsphinx) and forwards signals',
  async (t) => {
    const install = instructions.find((l) => l.startsWith('RUN ') && /apt-get install\b.*\btini\b/.test(l))
    t.ok(install, 'tini installed from Debian in the runtime stage')
    t.match(instructions.find((l) => l.startsWith('ENTRYPOINT ')), /^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/)
    t.equal(instructions.at(-1), 'CMD ["node", "dist/src/server.js"]', 'the service is tini\'s child')
  })

t.test('speech to text in the image: local engine packages behind a build argument', async (t) => {
  t.ok(instructions.includes('ARG WITH_SPEECH=false'))
  const install = instructions.find((l) => l.includes('WITH_SPEECH" = "true"'))!
  for (const pkg of ['pocketsphinx', 'pocketsphinx-en-us', 'ffmpeg']) t.match(install, new RegExp(`\\b${pkg}\\b`), pkg)
})

t.test('the health check tolerates a long start (migrations, catch-up after an upgrade)', async (t) => {
  const check = instructions.find((l) => l.startsWith('HEALTHCHECK '))!
  const period = /--start-period=(\S+)/.exec(check)?.[1]
  t.ok(period && seconds(period) >= 600, `start period ${period} of at least 10 minutes`)
  t.match(check, /CMD .*\/api\/health/)
})

t.test('compose: stop grace above the shutdown timeout; the model server pinned and waited for', async (t) => {
  const cairn = compose.services.cairn
  const timeout = loadConfig({ CAIRN_SHUTDOWN_TIMEOUT: cairn.environment?.CAIRN_SHUTDOWN_TIMEOUT }).shutdownTimeoutMs
  t.ok(cairn.stop_grace_period, 'stop_grace_period set (Docker\'s default is 10 s)')
  t.ok(seconds(cairn.stop_grace_period!) * 1000 >= timeout + 5000,
    `Docker waits ${cairn.stop_grace_period} for a shutdown that takes up to ${timeout / 1000} s`)
  t.ok(cairn.init === true || instructions.some((l) => l.startsWith('ENTRYPOINT ["/usr/bin/tini"')), 'an init')

  const ollama = compose.services.ollama
  t.match(ollama.image, /^ollama\/ollama:\d+\.\d+\.\d+$/, 'a version tag, not latest')
  t.ok(ollama.healthcheck?.test?.length, 'the model server has a health check')
  t.equal(cairn.depends_on?.ollama?.condition, 'service_healthy', 'Cairn starts once the model server answers')
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.image && !service.image.startsWith('cairn:')) t.notMatch(service.image, /:latest$|^[^:]+$/, name)
  }
})
