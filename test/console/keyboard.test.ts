// Every console page used with the keyboard alone, on a desktop and on a phone (pages: test/console/accessibility.ts).
import t from 'tap'
import { harness, DESKTOP, PHONE } from './harness.js'
import { checkWithKeyboard, PAGES_CONFIG } from './accessibility.js'

const h = await harness(t, PAGES_CONFIG)
if (h) {
  await t.test('at 1280×800, Tab reaches every control of each page, in order, the focus always drawn',
    (t) => checkWithKeyboard(t, h, DESKTOP))
  await t.test('390 px wide too', (t) => checkWithKeyboard(t, h, PHONE))
}
