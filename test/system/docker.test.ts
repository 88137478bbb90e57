import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { build, tempDir, ROOT } from '../helper.js'

const root = ROOT
const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8')
const stages = dockerfile.split(/^FROM /m).slice(1)

/** `COPY a b ./dest` → [a, b] (without --from) */
function copySources(stage: string): string[] {
  return [...stage.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/).slice(0, -1))
}

t.test('the Dockerfile: two stages, an unprivileged user, a data volume, a health check on /api/health', async (t) => {
  t.equal(stages.length, 2)
  const runtime = stages[1]
  t.match(runtime, /^USER node$/m)
  t.match(runtime, /^VOLUME \/data$/m)
  t.match(runtime, /CAIRN_DATA_DIR=\/data/)
  t.match(runtime, /HOST=0\.0\.0\.0/)
  t.match(runtime, /^HEALTHCHECK .*\\\n\s+CMD .*\/api\/health/m)
  t.notMatch(runtime, /npm (ci|install)|g\+\+/, 'no compilers or installs in the runtime stage')
})

t.test('the build stage\'s commands succeed in a clean directory holding only what it copies', async (t) => {
  const dir = tempDir(t)
  for (const source of copySources(stages[0])) {
    t.ok(fs.existsSync(path.join(root, source)), `${source} exists`)
    fs.cpSync(path.join(root, source), path.join(dir, source), { recursive: true })
  }
  // npm ci is the one step not repeated here (the tree is installed already, and it compiles for a minute);
  // the build emits without its type check, which `npm test` runs on the same files anyway
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  const tsc = spawnSync(process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--noCheck'],
    { cwd: dir, encoding: 'utf8' })
  t.equal(tsc.status, 0, tsc.stdout + tsc.stderr)
  for (const m of stages[1].matchAll(/^COPY --from=build \/app\/(\S+)/gm)) {
    t.ok(fs.existsSync(path.join(dir, m[1])), `the runtime stage finds ${m[1]}`)
  }
  t.equal(/^CMD \["node", "([^"]+)"\]$/m.exec(stages[1])?.[1], 'dist/src/server.js')
  t.ok(fs.existsSync(path.join(dir, 'dist', 'src', 'server.js')), 'the entry point is built')

  // the runtime stage's files alone start the service: it migrates a fresh data dir and listens
  const runtime = tempDir(t)
  fs.writeFileSync(path.join(runtime, 'package.json'), fs.readFileSync(path.join(dir, 'package.json')))
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(runtime, 'node_modules'), 'dir')
  fs.cpSync(path.join(dir, 'dist'), path.join(runtime, 'dist'), { recursive: true })
  // the migrations of cairn.db and of the outbox file: every schema folder the runtime stage copies
  for (const m of stages[1].matchAll(/^COPY --from=build \/app\/(schema\/\S+)/gm)) {
    fs.cpSync(path.join(dir, m[1]), path.join(runtime, m[1]), { recursive: true })
  }
  const child = spawn(process.execPath, ['dist/src/server.js'], {
    cwd: runtime,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', CAIRN_DATA_DIR: path.join(runtime, 'data') },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill() })
  const ready = await new Promise<string>((resolve) => {
    let out = ''
    child.stdout.on('data', (c) => { out += c; if (out.includes('Cairn is ready')) resolve(out) })
    child.on('exit', () => resolve(out))
  })
  t.match(ready, /Cairn is ready/)
  t.ok(fs.existsSync(path.join(runtime, 'data', 'cairn.db')))
})

t.test('the health check command passes against a running service and fails without one', async (t) => {
  const command = /CMD (node -e .+)$/m.exec(stages[1].slice(stages[1].indexOf('HEALTHCHECK')))![1]
  const script = /node -e "(.+)"$/.exec(command)![1]
  const app = await build(t)
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const port = new URL(address).port
  // asynchronously: the service answering the check runs in this process
  const check = () => new Promise<number | null>((resolve) => {
    spawn(process.execPath, ['-e', script], { env: { ...process.env, PORT: port }, stdio: 'ignore' }).on('exit',
      resolve)
  })
  t.equal(await check(), 0, 'healthy')
  await app.close()
  t.equal(await check(), 1, 'unhealthy when nothing answers')
})

t.test('compose.yaml: Cairn with an Ollama service for chat and embeddings, data on a volume', async (t) => {
  const compose = fs.readFileSync(path.join(root, 'compose.yaml'), 'utf8')
  // the ollama service's image, comment lines allowed between
  t.match(compose, /^ {2}ollama:\n(?: {4}#.*\n)* {4}image: ollama\/ollama/m)
  t.match(compose, /CAIRN_LLM_BASE_URL: "http:\/\/ollama:11434\/v1"/)
  t.match(compose, /CAIRN_LLM_MODEL: "\S+"/)
  t.match(compose, /CAIRN_EMBED_BASE_URL: "http:\/\/ollama:11434\/v1"/)
  t.match(compose, /- cairn-data:\/data/)
})
