import t from 'tap'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { tempDir } from '../helper.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const drizzleKit = path.join(root, 'node_modules/.bin/drizzle-kit')

/**
 * The migration drift check: schema/tables and schema/migrations describe the same database (cairn.db), as do
 * schema/outbox and schema/outbox-migrations (the outbox file). drizzle-kit runs against a copy of the migrations,
 * so a drift never writes into the project.
 */
for (const [name, schema, migrations] of [['cairn.db', 'schema/tables', 'schema/migrations'],
  ['the outbox file', 'schema/outbox', 'schema/outbox-migrations']]) {
  t.test(`${name}: drizzle-kit generate finds nothing to migrate, and check passes`, async (t) => {
    const dir = tempDir(t)
    const out = path.join(dir, 'migrations')
    fs.cpSync(path.join(root, migrations), out, { recursive: true })
    const config = path.join(dir, 'drizzle.config.mjs')
    fs.writeFileSync(config, `export default ${JSON.stringify({
      // relative to the project: drizzle-kit check reads paths as './' + out
      dialect: 'sqlite', schema: `./${schema}/*.ts`, out: path.relative(root, out)
    })}\n`)
    const before = fs.readdirSync(out).sort()

    const generated = await run(drizzleKit, ['generate', `--config=${config}`], { cwd: root })
    const after = fs.readdirSync(out).sort()
    const said = generated.stdout + generated.stderr
    t.same(after, before, `${schema} and ${migrations} agree (else: npm run db:generate)`, { said })
    t.match(said, /No schema changes/)

    const checked = await run(drizzleKit, ['check', `--config=${config}`], { cwd: root })
    t.match(checked.stdout + checked.stderr, /Everything's fine/)
  })
}
