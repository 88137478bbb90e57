import t from 'tap'
import { caseForms, queryTerms, innerWords, fold, wordsSnippet, MAX_TERMS, wordsMatch } from
  '../src/knowledge/query.js'
import { readerTokens } from '../src/knowledge/readers.js'

t.test('query words: folded, stop words dropped, pieces with punctuation kept as phrases, capped', async (t) => {
  t.same(queryTerms('How many weeks of parental leave do employees get?'),
    [['weeks'], ['parental'], ['leave'], ['employees']])
  t.same(queryTerms('Élèves de l’École'), [['eleves'], ['de'], ['l', 'ecole']])
  t.same(queryTerms("the employee's e-mail snake_case"), [['employee'], ['e', 'mail'], ['snake', 'case']])
  t.same(queryTerms('what is the'), [])
  t.same(queryTerms('leave LEAVE Leave'), [['leave']], 'deduplicated')
  t.equal(queryTerms(Array.from({ length: 50 }, (_, i) => `word${i}`).join(' ')).length, MAX_TERMS)
  t.equal(fold('ÉCOLE Straße'), 'ecole straße')
})

t.test('inner words of a substring query: a phrase when every inner run is ASCII', async (t) => {
  t.same(innerWords('eceive sixteen weeks of parental le'),
    { phrase: true, words: ['sixteen', 'weeks', 'of', 'parental'] })
  t.same(innerWords("de l'école arrivent à hu"), { phrase: false, words: ['l', 'arrivent'] })
  t.same(innerWords('TRAVEL EXPENSES ARE'), { phrase: false, words: ['expenses'] })
  t.same(innerWords('parental leave'), { phrase: false, words: [] }, 'two runs: both may be parts of longer words')
})

t.test('MATCH expressions quote everything; reader tokens follow the scope filter', async (t) => {
  const reader = { customerId: 'AAAAAAAA-0000-0000-0000-000000000001', userId: 'bbbbbbbb-0000-0000-0000-000000000002',
    workspaceIds: ['cccccccc-0000-0000-0000-000000000003'] }
  t.same(readerTokens(reader),
    ['oaaaaaaaa000000000000000000000001z', 'wcccccccc000000000000000000000003z',
      'ubbbbbbbb000000000000000000000002aaaaaaaa000000000000000000000001z'])
  t.same(readerTokens(reader, 'workspace'), ['wcccccccc000000000000000000000003z'])
  t.equal(wordsMatch([['near'], ['a', 'b']], ['ox']), '{readers}: ("ox") AND {text}: ("near" OR "a b")')
})

t.test('word snippets mark the matched words around the densest run', async (t) => {
  const text = 'Intro text. ' + 'filler '.repeat(40) + 'Employees receive sixteen weeks of parental leave.'
  const s = wordsSnippet(text, queryTerms('parental leave weeks'))
  t.match(s, /^….*<mark>weeks<\/mark> of <mark>parental<\/mark> <mark>leave<\/mark>\.$/)
  t.equal(wordsSnippet('nothing here', [['absent']]), 'nothing here')
})

t.test('caseForms: every text whose lower case holds a short needle holds one of its forms', async (t) => {
  t.same(caseForms('e'), ['e', 'E'])
  t.same(new Set(caseForms('k')), new Set(['k', 'K', '\u212a']), 'the Kelvin sign lowers to k')
  t.ok(caseForms('i')!.includes('İ'), 'İ lowers to i and a combining dot')
  t.ok(caseForms('ς')!.includes('Σ'), 'a final capital sigma lowers to ς')
  t.equal(caseForms('ab')!.length, 4)
  // exhaustive over a sample of scripts: each text holding the needle in lower case holds a form of it
  const alphabet = ['a', 'B', 'é', 'É', 'ß', 'ẞ', 'İ', 'I', 'K', 'Σ', 'ΑΣ', 'ñ', 'Ñ', '😀', ' ', 'Ǆ', 'ǅ', 'ǆ']
  const texts = alphabet.flatMap((a) => alphabet.map((b) => a + b))
  let checked = 0
  for (const text of texts) {
    const lower = text.toLowerCase()
    for (const needle of new Set([...[...lower].map((c) => c), ...[...lower].slice(0, -1).map((c, i) => c +
      [...lower][i + 1])])) {
      const forms = caseForms(needle)
      if (!forms) continue
      checked++
      t.ok(forms.some((f) => text.includes(f)), `${JSON.stringify(text)} holds a form of ${JSON.stringify(needle)}`)
    }
  }
  t.ok(checked > 500)
  // every code point that lowers to one character is among that character's forms
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const c = String.fromCodePoint(cp)
    const lower = c.toLowerCase()
    if (lower !== c && [...lower].length === 1 && !caseForms(lower)!.includes(c)) t.fail(`${c} is a form of ${lower}`)
  }
})
