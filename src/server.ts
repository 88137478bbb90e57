import { checkDataDir, ConfigError, loadConfig, type Config } from './config.js'
import { buildApp, loggerOptions } from './app.js'

let config: Config
try {
  config = loadConfig()
  checkDataDir(config.dataDir)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  // one line per problem, no stack trace: the operator fixes the environment, not the code
  process.stderr.write(`Cairn cannot start: ${err.problems.length === 1 ? 'a setting is' : 'settings are'} invalid\n${err.problems.map((p) => `  ${p}\n`).join('')}`)
  process.exit(1)
}
const app = await buildApp(config, { logger: loggerOptions(config.logLevel) })

let closing = false
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => {
      app.log.error('graceful shutdown timed out')
      process.exit(1)
    }, 30_000)
    force.unref()
    app.close().then(
      () => process.exit(0),
      (err) => { app.log.error({ err }, 'error during shutdown'); process.exit(1) }
    )
  })
}

try {
  await app.listen({ host: config.host, port: config.port })
  app.log.info({ dataDir: config.dataDir }, 'Cairn is ready')
} catch (err) {
  app.log.error({ err }, 'could not start')
  await app.close().catch(() => undefined)
  process.exit(1)
}
