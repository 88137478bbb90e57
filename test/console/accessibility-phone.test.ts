// Every console page checked by axe-core in Chromium on a phone, 390 px wide (pages: test/console/accessibility.ts).
import t from 'tap'
import { harness, PHONE } from './harness.js'
import { checkWithAxe, PAGES_CONFIG } from './accessibility.js'

const h = await harness(t, PAGES_CONFIG)
if (h) {
  await t.test('axe finds nothing serious or critical on any page at 390 px wide', (t) => checkWithAxe(t, h, PHONE))
}
