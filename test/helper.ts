import fs from 'node:fs'
import { spawn } from 'node:child_process'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Test } from 'tap'
import { loadConfig, type Config } from '../src/config.js'
import { buildApp, type App, type BuildOptions } from '../src/app.js'
import { lowerPasswordCostForTests } from '../src/auth/passwords.js'
import { PAIRS_BEHIND_SQL } from '../src/knowledge/phrase-index.js'
import { createExtractor, type Extractor } from '../src/ingest/run.js'
import { schemaController } from './schema-compilers.js'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { openSearchConnection, trigramFile, trigramsBehind } from '../src/knowledge/trigram-file.js'
import { outboxFile } from '../src/db/outbox-file.js'
import { createKnowledgeStore, type KnowledgeStore } from '../src/knowledge/store.js'

/** The repository's root, and test/fixtures/: for tests in any folder of test/ */
export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const FIXTURES = path.join(ROOT, 'test', 'fixtures')
/**
 * `node` arguments that run a TypeScript file (src/server.ts, a CLI, a fixture) in a child process through the test
 * processes' own loader, whose esbuild output is cached by content (test/ts-hooks.mjs): tsx transpiled all of src/
 * again in every child. A child that inherits NODE_OPTIONS already has it; the same module is imported once.
 */
export const TS_CHILD = ['--import', pathToFileURL(path.join(ROOT, 'test', 'ts-loader.mjs')).href]

/** `npm run backup` / `npm run restore` as a separate process, as an operator runs them */
export function runCli(command: 'backup' | 'restore', dataDir: string, file: string) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...TS_CHILD, path.join(ROOT, 'src', 'cli', `${command}.ts`), file], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CAIRN_DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    child.stderr.on('data', (c) => { stderr += c })
    child.on('exit', (code) => resolve({ code, stderr }))
  })
}

// a few hundred sign-ups and logins per run: at production cost each hash is ~57 ms of CPU (see passwords.ts)
if (process.env.TAP === '1') lowerPasswordCostForTests()

export interface BuildTestOptions extends BuildOptions {
  config?: Partial<Config>
  /** a data dir to reuse (restart tests); default a fresh temp dir removed at teardown */
  dataDir?: string
  /** runs before the app is ready: register extra test routes here */
  before?: (app: App) => void | Promise<void>
}

/** A port nothing listens on: taken, then let go. */
export async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

export function tempDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-test-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

let template: Promise<string> | undefined
/** the files a first start writes beside the data dir's database, named after it */
const COMPANIONS = [trigramFile, outboxFile]

/** The hash of every file under `dir`, names and contents, in a fixed order. */
function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) hashTree(hash, file)
    else hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0')
  }
}

/**
 * A database as the app leaves it after its first start on an empty data dir (every migration applied, the pair
 * index stamped with this Node.js's Unicode and SQLite versions), with the trigram and outbox files beside it, made
 * once and shared by the test processes through os.tmpdir(): each app starts from copies instead of running all
 * migrations again (~40 ms of CPU per app), emptying the pair index a fresh database asks for (~60 ms:
 * src/knowledge/indexer.ts; test/knowledge/indexer.test.ts covers that path) and making the trigram file's full-text
 * table and the outbox file (~8 ms; test/db/outbox-file.test.ts and the trigram tests cover their making).
 * openDatabase() still runs the migrator on the copy, which finds nothing left to apply. Keyed by the migrations, the
 * code of src/ and schema/ (what a first start writes) and the Node.js version, so a change to any of them makes a
 * new one.
 */
function startedTemplate(): Promise<string> {
  return template ??= makeTemplate()
}

async function makeTemplate(): Promise<string> {
  const hash = createHash('sha256').update(process.version).update('\0').update('with its trigram and outbox files\0')
  for (const dir of ['schema', 'src']) hashTree(hash, path.join(ROOT, dir))
  const dir = path.join(os.tmpdir(), `cairn-test-templates-${os.userInfo().uid}`)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const stat = fs.statSync(dir)
  // a shared /tmp: only a folder of our own, closed to others, holds databases the tests start from
  if (stat.uid !== os.userInfo().uid || (stat.mode & 0o077) !== 0) throw new Error(`${dir}: not ours alone`)
  const file = path.join(dir, `started-${hash.digest('hex').slice(0, 32)}.db`)
  if (fs.existsSync(file)) {
    // its last use, for the clean-up below
    fs.utimesSync(file, new Date(), new Date())
    return file
  }
  // made aside and renamed into place: test processes running side by side never see half a template
  const making = fs.mkdtempSync(path.join(dir, 'making-'))
  try {
    const app = await buildApp(loadConfig({ CAIRN_DATA_DIR: making }),
      { knowledge: knowledgeOptions({}), schemaController })
    await app.ready()
    await app.close()
    // closed, each write-ahead log is folded into its database file and removed (the app leaves the trigram file's
    // for its next start: folded here, by the last connection to close)
    const made = path.join(making, 'cairn.db')
    for (const companion of COMPANIONS) {
      const db = new Database(companion(made))
      db.pragma('wal_checkpoint(TRUNCATE)')
      db.close()
    }
    const left = fs.readdirSync(making).filter((name) => /\.db-/.test(name))
    if (left.length) throw new Error(`the template's database left ${left.join(', ')} behind`)
    // the database last: a process that finds it finds the files beside it
    for (const companion of COMPANIONS) fs.renameSync(companion(made), companion(file))
    fs.renameSync(made, file)
  } finally {
    fs.rmSync(making, { recursive: true, force: true })
  }
  // templates of other versions of the code, a day after their last use (another worktree may be using one now)
  for (const name of fs.readdirSync(dir)) {
    const old = path.join(dir, name)
    try {
      if (old !== file && Date.now() - fs.statSync(old).mtimeMs > 86_400_000) fs.rmSync(old, { recursive: true })
    } catch {
      // removed by another test process meanwhile
    }
  }
  return file
}

/**
 * The data dir's database as a copy of the started template, unless it has one (restarts). A data dir that does
 * not exist yet is left to the app, whose making of it (modes) is under test.
 */
export async function seedDatabase(dataDir: string): Promise<void> {
  const target = path.join(dataDir, 'cairn.db')
  if (!fs.existsSync(dataDir) || fs.existsSync(target)) return
  const template = await startedTemplate()
  for (const name of [(f: string) => f, ...COMPANIONS]) {
    fs.copyFileSync(name(template), name(target), fs.constants.COPYFILE_EXCL)
    fs.chmodSync(name(target), 0o600)
  }
}

let sharedExtractor: Extractor | undefined

/**
 * The extraction pool of the apps of a test process that bring none of their own (no extractor, no worker limits),
 * as one service keeps one pool for every upload: each app made its own, and the first PDF, DOCX or HTML file of
 * each app started a worker thread loading pdf.js and mammoth (about a second of CPU). Closing an app leaves it
 * open; its workers are unref'd and end with the process.
 */
function knowledgeOptions(options: BuildTestOptions): BuildOptions['knowledge'] {
  if (options.knowledge?.extractor || options.knowledge?.workerLimits) return options.knowledge
  sharedExtractor ??= createExtractor()
  return { ...options.knowledge, extractor: { ...sharedExtractor, close: async () => {} } }
}

/** An app on a fresh temp database; sign-up open so tests can make several organizations. */
export async function build(t: Test, options: BuildTestOptions = {}): Promise<App> {
  const dataDir = options.dataDir ?? tempDir(t)
  const config: Config = { ...loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_SIGNUP: 'open' }), ...options.config }
  await seedDatabase(config.dataDir)
  const app = await buildApp(config, { logger: options.logger, knowledge: knowledgeOptions(options), schemaController })
  t.teardown(() => app.close())
  if (options.before) await options.before(app)
  await app.ready()
  return app
}

export interface TestUser {
  token: string
  userId: string
  customerId: string
  workspaceId: string
  email: string
  password: string
  auth: { authorization: string }
}

let counter = 0
export async function signup(app: App, email?: string): Promise<TestUser> {
  const address = email ?? `user${++counter}-${process.pid}@example.test`
  const password = 'correct horse battery'
  const res = await app.inject({ method: 'POST', url: '/api/v2/auth/signup', payload: { email: address, password } })
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`)
  const d = res.json().data
  return {
    token: d.token, userId: d.user.id, customerId: d.customerId, workspaceId: d.workspaceId,
    email: address, password, auth: { authorization: `Bearer ${d.token}` }
  }
}

/** A second user in the same organization, created by its owner. */
export async function addUser(app: App, owner: TestUser, role: 'admin' | 'member' = 'member'): Promise<TestUser> {
  const email = `member${++counter}-${process.pid}@example.test`
  const password = 'another long password'
  const created = await app.inject({ method: 'POST', url: '/api/v2/users', headers: owner.auth,
    payload: { email, password, role } })
  if (created.statusCode !== 201) throw new Error(`add user failed: ${created.body}`)
  const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login', payload: { email, password } })
  const token = login.json().data.token
  return {
    token, userId: created.json().data.id, customerId: owner.customerId, workspaceId: '',
    email, password, auth: { authorization: `Bearer ${token}` }
  }
}

export async function createKey(app: App, user: TestUser, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: user.auth,
    payload: { name: 'test key', scopes, ...extra } })
  if (res.statusCode !== 201) throw new Error(`create key failed: ${res.statusCode} ${res.body}`)
  return res.json().data as { id: string; key: string; scopes: string[]; workspace_id: string | null }
}

export interface FilePart { name?: string; filename: string; content: Buffer | string; contentType?: string }

/** A multipart/form-data body, built by hand so tests control every byte (names, order, sizes). */
export function multipart(files: FilePart[], fields: Record<string, string> = {}, fieldsFirst = true,
  boundary = '----cairn' + randomBytes(8).toString('hex')) {
  const chunks: Buffer[] = []
  const addFields = () => {
    for (const [k, v] of Object.entries(fields)) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`))
    }
  }
  if (fieldsFirst) addFields()
  for (const f of files) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; ` +
      `name="${f.name ?? 'file'}"; filename="${f.filename}"\r\n` +
      `Content-Type: ${f.contentType ?? 'application/octet-stream'}\r\n\r\n`))
    chunks.push(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content))
    chunks.push(Buffer.from('\r\n'))
  }
  if (!fieldsFirst) addFields()
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

/** Uploads one file as `user`, expects 201 and waits for background jobs: the new document. */
export async function uploadDocument(app: App, user: TestUser, file: FilePart, fields: Record<string, string> = {}) {
  const body = multipart([file], fields)
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
    headers: { ...user.auth, ...body.headers }, payload: body.payload })
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.statusCode} ${res.body}`)
  await app.jobs.idle()
  return res.json().document as { id: string }
}

/**
 * Resolves once the pair index (src/knowledge/phrase-index.ts) holds every passage: the index worker catches up when it
 * has nothing else to do, after the upload's answer.
 */
export async function pairIndexCaughtUp(app: App, within = 30_000): Promise<void> {
  const behind = app.sqlite.prepare(PAIRS_BEHIND_SQL).pluck()
  await caughtUp(() => behind.get() === 1, 'the pair index', within)
}

/** Waits for the trigram file to hold every passage and apply every delete (src/knowledge/trigram-file.ts). */
export async function trigramsCaughtUp(t: Test, app: App, within = 30_000): Promise<void> {
  await caughtUp(() => trigramsBehind(searching(t, app)[0]), 'the trigram index', within)
}

/** polls `behind` every 5 ms until it is false; fails after `within` ms */
async function caughtUp(behind: () => boolean, what: string, within: number) {
  const until = Date.now() + within
  while (behind()) {
    if (Date.now() > until) throw new Error(`${what} did not catch up`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const searchers = new WeakMap<App, readonly [Database.Database, KnowledgeStore]>()

/**
 * A connection that searches, as a search worker's (`createSearch(...searching(t, app))`): read only, with the
 * trigram file attached (the app's own connection writes with BEGIN IMMEDIATE and never attaches it), and a
 * knowledge store on it. One per app, closed with the test that asked first.
 */
export function searching(t: Test, app: App): readonly [Database.Database, KnowledgeStore] {
  let made = searchers.get(app)
  if (!made) {
    const sqlite = openSearchConnection(path.join(app.config.dataDir, 'cairn.db'))
    t.teardown(() => sqlite.close())
    made = [sqlite, createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables }))] as const
    searchers.set(app, made)
  }
  return made
}

/** The niceness of each thread of this process by TID, from /proc (field 19 of a task's stat). Linux only. */
export function threadNiceness(): Map<string, number> {
  return new Map(fs.readdirSync('/proc/self/task').map((tid) =>
    [tid, Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16])] as const))
}

/** Every process on the machine: its PID, its parent's, its niceness and its command line, from /proc. Linux only. */
export function processTable(): Array<{ pid: number; parent: number; niceness: number; cmdline: string }> {
  return fs.readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
      return [{ pid: Number(pid), parent: Number(fields[1]), niceness: Number(fields[16]),
        cmdline: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') }]
    } catch {
      return [] // gone meanwhile
    }
  })
}
