import t from 'tap'
import { queryTerms, innerWords, fold, wordsSnippet, MAX_TERMS, wordsMatch } from '../../src/knowledge/query.js'
import { readerTokens } from '../../src/knowledge/readers.js'

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
  t.same(innerWords('x a b c d e f g h i j k longer words here y'),
    { phrase: true, words: ['g', 'h', 'i', 'j', 'k', 'longer', 'words', 'here'] },
    'a long phrase: the 8 neighbouring words with the most characters')
  t.same(innerWords('x a bb ccc dddd é eeeee ffffff ggggggg hhhhhhhh iiiiiiiii y').words,
    ['iiiiiiiii', 'hhhhhhhh', 'ggggggg', 'ffffff', 'eeeee', 'dddd', 'ccc', 'bb'], 'or the 8 longest words')
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
