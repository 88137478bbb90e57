// The suites of test/suite.ts against the files that exist: each suite has its file in test/suites/, each pattern
// still names a test file, and every test file runs in exactly one suite
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { names, SUITES, suiteOf, testFiles } from './suite.js'
import { ROOT } from './helper.js'

t.test('each suite has its file in test/suites/, and each file there a suite', async (t) => {
  const files = fs.readdirSync(path.join(ROOT, 'test', 'suites')).filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.replace(/\.test\.ts$/, '')).sort()
  t.same(files, Object.keys(SUITES).sort())
  for (const name of files) {
    t.equal(fs.readFileSync(path.join(ROOT, 'test', 'suites', `${name}.test.ts`), 'utf8'),
      "import { runSuite } from '../suite.js'\n\nawait runSuite(import.meta.url)\n", `${name} runs its suite`)
  }
})

t.test('each pattern names a test file that runs in its suite, and every test file is in a suite', async (t) => {
  const all = testFiles()
  t.ok(all.length > 100, `${all.length} test files found`)
  t.notOk(all.some((f) => f.startsWith('suites/')), 'the suites themselves are not test files of a suite')
  for (const [suite, patterns] of Object.entries(SUITES)) {
    for (const pattern of patterns) {
      t.ok(all.some((f) => names(pattern, f) && suiteOf(f) === suite),
        `${suite}: ${pattern} names a file it runs`)
    }
  }
  for (const file of all) t.ok(Object.hasOwn(SUITES, suiteOf(file)), `${file} runs in ${suiteOf(file)}`)
})

t.test('the most specific pattern wins; what none names runs in rest', async (t) => {
  const expected = { 'knowledge/search.test.ts': 'knowledge-search', 'knowledge/listing.test.ts': 'knowledge-store',
    'events/webhooks.test.ts': 'webhooks', 'events/outbox.test.ts': 'events', 'suite.test.ts': 'rest',
    'new-folder/new.test.ts': 'rest' }
  for (const [file, suite] of Object.entries(expected)) t.equal(suiteOf(file), suite, file)
})

t.test('.taprc runs the suites', async (t) => {
  t.match(fs.readFileSync(path.join(ROOT, '.taprc'), 'utf8'), /^include:\n {2}- "test\/suites\/\*\.test\.ts"$/m)
})
