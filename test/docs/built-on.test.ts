import t from 'tap'
import { readPage } from './pages.js'

// each dependency earns a line in the README's "Built on" list (type declarations ride along with their package)
t.test('every dependency of package.json is named in the README\'s "Built on"', async (t) => {
  const readme = readPage('README.md')
  const start = readme.indexOf('\n## Built on')
  t.ok(start > 0, 'the README has a "Built on" section')
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1)).toLowerCase()
  const pkg = JSON.parse(readPage('package.json')) as { dependencies: object; devDependencies: object }
  const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]
    .filter((n) => !n.startsWith('@types/'))
  t.ok(names.length > 20, `${names.length} dependencies`)
  t.same(names.filter((n) => !section.includes(n.toLowerCase())), [], 'named in "Built on"')
})
