// `npm test` runs the test files in suites: each file of test/suites/ is one test process that runs several test
// files one after the other. A test process spends ~1.2 s of CPU loading the service's modules and tap before its
// first test (Node 20 loads every module of a process with module hooks through a thread of their own); one process
// per file spent ~3 of the suite's 7 minutes of CPU there. Every test file still runs alone as well:
// `npx tap test/knowledge/search.test.ts`.
//
// Within a suite each file runs as it would alone: its tests, then the teardowns it gave the root test (apps
// closed, directories removed, the browser closed), before the next file starts. Its tests' names start with the
// file's path. A file belongs to the suite whose pattern names it most closely (the file itself, else the longest
// folder); `rest` takes what no pattern names. test/suite.test.ts checks that each suite has its file in
// test/suites/ and each pattern still names a file.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'

const TEST = fileURLToPath(new URL('.', import.meta.url))

/**
 * The suites and the test files (relative to test/) or folders (ending in /) they run. Sized from each file's CPU
 * and time (`npm test`'s output gives each suite's): a suite of ~30-60 s on a quiet 2-core machine, four running
 * at once (.taprc), the browser tests spread over several because they mostly wait for the browser. tap starts them
 * in the order of their names: a long suite whose name sorts late lengthens the run's tail. Files that
 * measure their own process (resident memory, child processes) share a suite with files that leave nothing behind.
 * A suite runs its files in the order of its patterns, then by name.
 */
export const SUITES: Record<string, readonly string[]> = {
  'knowledge-search': ['knowledge/search.test.ts', 'knowledge/search-pool.test.ts', 'knowledge/planner.test.ts',
    'knowledge/query.test.ts', 'knowledge/short-query-filter.test.ts', 'knowledge/reader-shares.test.ts'],
  'knowledge-index': ['knowledge/index-walk.test.ts', 'knowledge/indexer.test.ts'],
  'knowledge-ranking': ['knowledge/ranking.test.ts', 'knowledge/heading-paths.test.ts',
    'knowledge/private-statistics.test.ts', 'knowledge/embeddings.test.ts'],
  'knowledge-store': ['knowledge/'],
  'knowledge-intake': ['knowledge/intake.test.ts'],
  ingest: ['ingest/'],
  'ingest-limits': ['ingest/pdf-bombs.test.ts', 'ingest/no-prlimit.test.ts'],
  webhooks: ['events/webhooks.test.ts', 'events/webhooks-outbox.test.ts'],
  events: ['events/'],
  'assistant-search': ['assistant/', 'plugins/knowledge/', 'search/', 'plugins/search/'],
  'workflows-voice': ['plugins/workflows/', 'plugins/voice-notes/'],
  'chat-artifacts': ['plugins/chat/', 'plugins/artifacts/', 'plugins/health/'],
  'developer-accounts-jobs': ['plugins/developer/', 'plugins/accounts/', 'developer-log/', 'jobs/'],
  http: ['http/', 'net/', 'log/', 'config.test.ts'],
  // passwords first: it checks the production cost, which test/helper.ts lowers for the whole process
  auth: ['auth/passwords.test.ts', 'auth/'],
  'mcp-startup': ['mcp/', 'startup/'],
  db: ['db/'],
  docs: ['docs/'],
  openapi: ['system/openapi-fetch.test.ts', 'system/openapi-typing.test.ts', 'system/openapi.test.ts'],
  clients: ['system/client-types.test.ts', 'system/client-typescript.test.ts', 'system/client-python.test.ts',
    'system/client-voice.test.ts'],
  packaging: ['system/client-package.test.ts', 'system/docker.test.ts', 'system/container.test.ts'],
  operations: ['system/operations.test.ts', 'system/startup-report.test.ts', 'system/config-errors.test.ts',
    'system/backup-unheld.test.ts'],
  'crash-shutdown': ['system/crash.test.ts', 'system/shutdown.test.ts', 'system/server.test.ts'],
  system: ['system/'],
  'console-browser': ['console/browser.test.ts', 'console/serving.test.ts', 'console/router.test.ts'],
  'console-keyboard': ['console/keyboard.test.ts', 'console/accessibility-desktop.test.ts',
    'console/format.test.ts'],
  'console-review': ['console/developer.test.ts', 'console/comments.test.ts', 'console/text-anchor.test.ts'],
  'console-settings': ['console/settings.test.ts', 'console/workflows-editor.test.ts'],
  'console-knowledge': ['console/knowledge.test.ts', 'console/chat.test.ts', 'console/voice.test.ts'],
  console: ['console/'],
  rest: []
}

/** Every test file, relative to test/, in a fixed order; the suites' own files are not among them. */
export function testFiles(dir = TEST): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (file !== path.join(TEST, 'suites') && entry.name !== 'fixtures') found.push(...testFiles(file))
    } else if (entry.name.endsWith('.test.ts')) found.push(path.relative(TEST, file).split(path.sep).join('/'))
  }
  return found
}

/** Whether a pattern of SUITES names a test file (relative to test/): the file itself, or a folder above it. */
export function names(pattern: string, file: string): boolean {
  return pattern === file || (pattern.endsWith('/') && file.startsWith(pattern))
}

/** The suite that runs a test file (relative to test/): the pattern that names it most closely wins. */
export function suiteOf(file: string): string {
  let best: { suite: string; length: number } | undefined
  for (const [suite, patterns] of Object.entries(SUITES)) {
    for (const pattern of patterns) {
      if (!names(pattern, file)) continue
      const length = pattern === file ? Infinity : pattern.length
      if (!best || length > best.length) best = { suite, length }
    }
  }
  return best?.suite ?? 'rest'
}

/** Runs the files of the suite whose file in test/suites/ is `suiteUrl` (its import.meta.url), then ends. */
export async function runSuite(suiteUrl: string): Promise<void> {
  const name = path.basename(fileURLToPath(suiteUrl), '.test.ts')
  if (!(name in SUITES)) throw new Error(`test/suites/${name}.test.ts names no suite of test/suite.ts`)
  // in the order of the patterns that name them, so that a file that needs a fresh process can come first
  const rank = (file: string) => SUITES[name].findIndex((pattern) => names(pattern, file))
  const files = testFiles().filter((file) => suiteOf(file) === name).sort((a, b) => rank(a) - rank(b))
  if (files.length === 0) t.comment(`no test file belongs to the suite ${name}`)
  const atEnd: Teardown[] = []
  suiteEnd = atEnd
  for (const file of files) await runFile(file)
  suiteEnd = undefined
  if (atEnd.length > 0) await t.test(`${name}: done, what its files shared closed`, (tt) => runAll(tt, atEnd))
  t.end()
}

type Teardown = () => unknown

/** what the files of the running suite share, to close when its last file is done */
let suiteEnd: Teardown[] | undefined

/**
 * `fn` to run when the suite's last file is done, for what the files of a suite share (one browser); when the file
 * runs alone, at the end of `t`, the root test.
 */
export function atSuiteEnd(t: { teardown(fn: Teardown): void }, fn: Teardown): void {
  if (suiteEnd) suiteEnd.push(fn)
  else t.teardown(fn)
}

/** teardowns, the last one given first as tap runs them, each one's failure reported */
async function runAll(tt: { error(err: unknown, message: string): void; pass(message: string): void },
  teardowns: Teardown[]): Promise<void> {
  for (let fn = teardowns.pop(); fn; fn = teardowns.pop()) {
    try {
      await fn()
    } catch (err) {
      tt.error(err, 'a teardown failed')
    }
  }
  tt.pass('done')
}

/** One test file: imported (its tests queue on the root test), then its root teardowns once its tests are done. */
async function runFile(file: string): Promise<void> {
  const root = t as unknown as { test: (...args: unknown[]) => unknown; teardown: (fn: Teardown) => void }
  const { test, teardown } = root
  const teardowns: Teardown[] = []
  // A root teardown given to tap would only run as the process ends, and would make tap end the root test as soon
  // as it waits for nothing, as it does while the next file loads
  root.teardown = (fn) => { teardowns.push(fn) }
  root.test = (name: unknown, ...rest: unknown[]) =>
    test.call(t, typeof name === 'string' ? `${file} › ${name}` : name, ...rest)
  try {
    await import(pathToFileURL(path.join(TEST, file)).href)
  } catch (err) {
    t.error(err, `${file} did not load`)
  } finally {
    root.test = test
  }
  await t.test(`${file}: done, its teardowns run`, (tt) => runAll(tt, teardowns))
  root.teardown = teardown
}
