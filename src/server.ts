import { checkDataDir, ConfigError, loadConfig, type Config } from './config.js'
import { buildApp, loggerOptions } from './app.js'
import { shutDown } from './http/shutdown.js'

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
const app = await buildApp(config, { logger: loggerOptions(config.logLevel) })

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
  app.log.info({ dataDir: config.dataDir }, 'Cairn is ready')
} catch (err) {
  app.log.error({ err }, 'could not start')
  await app.close().catch(() => undefined)
  process.exit(1)
}
