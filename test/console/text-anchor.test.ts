// Comments on a selection without a browser: a selection found in a field's Markdown source, and found again on a
// later text.
import t from 'tap'
import { fieldText, isTextPosition, locateQuote, matchKey, placeQuote } from '../../console/src/text-anchor.js'

t.test('a field is a dotted path into the content', async (t) => {
  const content = { summary: 'S', steps: [{ title: 'A', detail: 'D' }, 'plain step'], n: 3 }
  t.equal(fieldText(content, 'summary'), 'S')
  t.equal(fieldText(content, 'steps.0.detail'), 'D')
  t.equal(fieldText(content, 'steps.1'), 'plain step')
  t.equal(fieldText(content, 'steps.2.title'), undefined)
  t.equal(fieldText(content, 'steps.x'), undefined, 'an array is indexed by numbers only')
  t.equal(fieldText(content, 'n'), undefined, 'only text fields')
  t.equal(fieldText(content, 'summary.length'), undefined)
})

t.test('a text position names a field and a quote', async (t) => {
  t.ok(isTextPosition({ kind: 'text', field: 'summary', quote: 'x' }))
  t.notOk(isTextPosition({ kind: 'text', field: '', quote: 'x' }))
  t.notOk(isTextPosition({ kind: 'text', field: 'summary', quote: '' }))
  t.notOk(isTextPosition({ kind: 'step', step: 1 }))
  t.notOk(isTextPosition(null))
})

t.test('a selection is found in the source, across Markdown marks, nearest where it was selected', async (t) => {
  const source = 'Move the **session cache** out of process.'
  t.same(locateQuote(source, 'summary', 'session cache out\n of', 9),
    { kind: 'text', field: 'summary', quote: 'session cache out of', start: 11, end: 33 },
    'the quote as seen; the offsets span the marks')
  const pets = 'the cat and the dog'
  t.same(locateQuote(pets, 'f', 'the', 12), { kind: 'text', field: 'f', quote: 'the', start: 12, end: 15 },
    'the second "the", where the selection began')
  t.same(locateQuote(pets, 'f', 'the', 0), { kind: 'text', field: 'f', quote: 'the', start: 0, end: 3 })
  t.same(locateQuote('see [the guide](https://x.test/g) now', 'f', 'the guide now', 4),
    { kind: 'text', field: 'f', quote: 'the guide now' }, 'not in the source as written: the quote alone')
})

t.test('a quote is placed on the text as it is now', async (t) => {
  const pos = { kind: 'text' as const, field: 'summary', quote: 'session cache out of', start: 11, end: 33 }
  t.same(placeQuote('Move the **session cache** out of process.', pos), { state: 'exact', start: 11, end: 33 })
  t.same(placeQuote('Soon, move the **session cache** out of process.', pos), { state: 'moved', start: 17, end: 39 },
    'found again by its quote')
  t.same(placeQuote('Keep the cache in process.', pos), { state: 'changed' })
  t.same(placeQuote(undefined, pos), { state: 'changed' }, 'the field is gone')
  t.same(placeQuote('a b a b', { kind: 'text', field: 'f', quote: 'a b' }), { state: 'moved', start: 0, end: 3 },
    'without offsets: the first')
  t.same(placeQuote('x a b a b', { kind: 'text', field: 'f', quote: 'a b', start: 5, end: 8 }),
    { state: 'moved', start: 6, end: 9 }, 'offsets a little off: the nearest')
})

t.test('the key for matching shown text ignores whitespace and marks', async (t) => {
  t.equal(matchKey('**a** b\n`c`'), 'abc')
})
