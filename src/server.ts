import { checkDataDir, ConfigError, loadConfig, type Config } from './config.js'
import { buildApp, loggerOptions } from './app.js'
import { shutDown } from './http/shutdown.js'
import { isDiskFull, noSpaceLeft } from './db/disk-full.js'
import { logFormat, prettyStream } from './log/pretty.js'
import { probeServices } from './startup/probes.js'
import { findMissingStoredFiles, missingFilesWarning, type MissingStoredFiles } from './startup/stored-files.js'
import { startupSummary } from './startup/summary.js'

let config: Config
try {
  config = loadConfig()
  checkDataDir(config.dataDir)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  // one line per problem, no stack trace: the operator fixes the environment, not the code
  process.stderr.write(`Cairn cannot start: ${err.problems.length === 1 ? 'a setting is' : 'settings are'} invalid\n` +
    err.problems.map((p) => `  ${p}\n`).join(''))
  process.exit(1)
}

/** A start that finds no space left says so in one line, without a stack trace, and exits 1. */
function diskFullExit(err: unknown): void {
  const said = isDiskFull(err)
  if (!said && !noSpaceLeft(config.dataDir)) return
  process.stderr.write(`Cairn cannot start: disk full: no space left to write in ${config.dataDir}` +
    (said ? ` (${(err as Error).message})` : '') + '; free some space and start again\n')
  process.exit(1)
}

/** how long past the probes the summary waits for the stored files' check */
const STORED_FILES_WAIT_MS = 2000

// asked while the app is built: the summary after listening waits for them at most a few seconds
const services = probeServices(config)

const terminal = process.stdout.isTTY === true
const logStream = logFormat(config.logFormat, terminal) === 'pretty'
  ? prettyStream(process.stdout, { colors: terminal }) : undefined
let app: Awaited<ReturnType<typeof buildApp>>
try {
  app = await buildApp(config, { logger: loggerOptions(config.logLevel, logStream) })
} catch (err) {
  diskFullExit(err)
  throw err
}

let closing = false
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return
    closing = true
    app.log.info({ signal, timeoutSeconds: config.shutdownTimeoutMs / 1000 }, 'shutting down')
    void shutDown(app, config.shutdownTimeoutMs).then((code) => process.exit(code))
  })
}

try {
  await app.listen({ host: config.host, port: config.port })
} catch (err) {
  if (isDiskFull(err) || noSpaceLeft(config.dataDir)) {
    await app.close().catch(() => undefined)
    diskFullExit(err)
  }
  app.log.error({ err }, 'could not start')
  await app.close().catch(() => undefined)
  process.exit(1)
}

/**
 * What the start found: stored files the database names but the data dir lacks (a restore without them), as a
 * warning; then one summary of the configuration and whether each part answers. The summary waits for the file
 * check at most a little past the probes (a data dir of a million files takes a while): a later warning still comes.
 * Nothing once shutdown has begun.
 */
async function reportStart(): Promise<void> {
  let missing: MissingStoredFiles | undefined
  const checked = findMissingStoredFiles(app.db, config.dataDir).then((found) => {
    missing = found
    const warning = closing ? undefined : missingFilesWarning(found)
    if (warning) {
      app.log.warn({ documents: found.documents, audioFiles: found.audio, voiceNotes: found.voiceNotes,
        examples: found.examples }, warning)
    }
  }, (err: unknown) => {
    if (!closing) app.log.error({ err }, 'the stored files could not be checked')
  })
  const found = await services
  await Promise.race([checked, new Promise((resolve) => setTimeout(resolve, STORED_FILES_WAIT_MS).unref())])
  if (closing) return
  const summary = startupSummary(config, app.sqlite, app.server.address(), found, missing)
  app.log[summary.level](summary.fields, summary.message)
}
await reportStart()
