// Every console page checked by axe-core in Chromium at 1280×800 (the pages: test/console/accessibility.ts).
import t from 'tap'
import { harness, DESKTOP } from './harness.js'
import { checkWithAxe, PAGES_CONFIG } from './accessibility.js'

const h = await harness(t, PAGES_CONFIG)
if (h) {
  await t.test('axe finds nothing serious or critical on any page at 1280×800', (t) => checkWithAxe(t, h, DESKTOP))
}
