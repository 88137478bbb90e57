import t from 'tap'
import Database from 'better-sqlite3'
import { AWKWARD, AWKWARD_ASCII, foldingMayDiffer, hasAwkward, pairMatch, pairTokens, PAIR_WORD_MAX }
  from '../../src/knowledge/pairs.js'

const near = (text: string) => pairTokens(text).near
t.test('pairTokens: the end of a word (2 characters, 6), the separator, the next word', async (t) => {
  t.same(pairTokens('Weeks of Parental leave'), { near: 'ks_of of_parental al_leave',
    far: 'weeks_of of_parental rental_leave' })
  t.equal(near('e-mail, then  x'), 'e|mail il|then en|x', 'anything but one space is `|`')
  t.equal(near('a b'), 'a_b', 'a one-letter word is whole')
  t.same(pairTokens('lonely'), { near: '', far: '' })
  t.equal(near(`go ${'y'.repeat(50)}`), `go_${'y'.repeat(PAIR_WORD_MAX)}`, 'the second word is cut')
  t.same(pairTokens('École normale à Paris'),
    { near: 'le_normale le_à à_paris', far: 'école_normale ormale_à à_paris' }, 'non-ASCII words, lower-cased')
  t.equal(near('Des Maſses'), `${AWKWARD_ASCII} es_maſses`, 'a long s (the index folds it to s) marks it')
  t.equal(near('5 µs'), `${AWKWARD} 5_µs`, 'a micro sign (folded to a Greek mu) marks it otherwise')
  t.equal(near('µ İ'), `${AWKWARD_ASCII} ${AWKWARD} µ_i̇`, 'both')
  t.equal(pairTokens('µ İ').far, 'µ_i̇', 'the marks are in `near` only')
  t.ok(foldingMayDiffer('Maſse', 'masse') && foldingMayDiffer('µs', 'μs'), 'the index is asked')
  t.notOk(foldingMayDiffer('5 µs', 'ms') || foldingMayDiffer('École', 'cole') || foldingMayDiffer('plain', 'x'),
    'an ASCII query where no character folds to ASCII: JavaScript\'s answer is the index\'s')
  t.ok(hasAwkward('ΟΔΟΣ') && hasAwkward('İstanbul') && hasAwkward('ς'), 'context and multi-character folds')
  t.notOk(hasAwkward('Straße Fluß École ÅNGSTRÖM 東京'), 'ordinary letters are not')
})

t.test('pairMatch: a phrase of the query\'s pairs in one column, the last a prefix; undefined when pairs cannot ' +
  'narrow', async (t) => {
  const marks = `{near}: ("${AWKWARD_ASCII}")`
  t.equal(pairMatch('weeks of parental'), `{near}: ("ks_of" + "of_parental" *) OR ${marks}`,
    'a first word of 2–5 characters may end a longer one: `near`')
  t.equal(pairMatch('introduced by the'), `{far}: ("oduced_by" + "by_the" *) OR ${marks}`,
    'one of 6 or more: `far`')
  t.equal(pairMatch(' of parental '), `{far}: ("of_parental") OR ${marks}`, 'separators at the ends: whole words')
  t.equal(pairMatch('s of parental'), `{far}: ("of_parental" *) OR ${marks}`,
    'a one-letter start may end any word: its pair is left out')
  t.equal(pairMatch('the fold. It is'), `{near}: ("he_fold" + "ld|it" + "it_is" *) OR ${marks}`)
  t.equal(pairMatch('weeks of p words'), `{near}: ("ks_of" + "of_p" + "p_words" *) OR ${marks}`)
  t.equal(pairMatch('them weeks of p'), `{near}: ("em_weeks" + "ks_of") OR ${marks}`,
    'a one-letter end is left out')
  t.equal(pairMatch('used in'), undefined, 'one pair of `near` stands for too many passages: the trigram index')
  t.equal(pairMatch('complete you'), `{far}: ("mplete_you" *) OR ${marks}`, 'one pair of `far` narrows enough')
  t.equal(pairMatch('one two three four five six seven eight nine'),
    `{near}: ("ee_four" + "ur_five" + "ve_six" + "ix_seven" + "en_eight" + "ht_nine" *) OR ${marks}`,
    'a long phrase: the 6 neighbouring pairs with the most characters')
  t.equal(pairMatch('of the of the of the of the'),
    `{near}: ("he_of" + "of_the" + "he_of" + "of_the" + "he_of" + "of_the" *) OR ${marks}`)
  t.equal(pairMatch('parental'), undefined, 'one word')
  t.equal(pairMatch('s o'), undefined, 'nothing left')
  t.equal(pairMatch('ΟΔΟΣ ΑΘΗΝΑΣ'), undefined, 'characters of uncertain folding')
  t.equal(pairMatch('une école normale'),
    `{near}: ("ne_école" + "le_normale" *) OR {near}: ("${AWKWARD_ASCII}" OR "${AWKWARD}")`,
    'a non-ASCII query: passages of both kinds')
})

/**
 * The filter never loses a passage: for random texts and every kind of substring of them (starting and ending
 * inside words, across punctuation, in any case), each text holding the substring is among the index's matches.
 */
t.test('every passage holding a query is among the pair index\'s matches', async (t) => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec(`CREATE VIRTUAL TABLE pair_index USING fts5(near, far, content = '', contentless_delete = 1,
    tokenize = "ascii tokenchars '_|'")`)
  let seed = 7
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
  const words = ['of', 'the', 'a', 'leave', 'parental', 'weeks', 'E-mail', 'Zebra', 'x', 'état', 'ÉCOLE', 'naïve',
    'straße', '東京', '42', 'v2', 'ab', 'reallylongwordthatgoesonandonandonforever']
  // in a few passages only: every pair query matches them
  const awkward = ['Maſse', 'İl', 'ΟΔΟΣ', 'µs']
  const seps = [' ', ' ', ' ', ' ', ', ', '. ', '-', '  ', '\n', ' (', ') ']
  const texts = Array.from({ length: 300 }, () => Array.from({ length: 4 + Math.floor(random() * 12) },
    () => random() < 0.01 ? pick(awkward) : pick(words)).map((w, i) => (i ? pick(seps) : '') + w).join(''))
  const insert = db.prepare('INSERT INTO pair_index (rowid, near, far) VALUES (?, @near, @far)')
  texts.forEach((text, i) => insert.run(i + 1, pairTokens(text)))
  const matches = db.prepare('SELECT rowid FROM pair_index WHERE pair_index MATCH ?').pluck()
  let checked = 0
  let narrowed = 0
  for (let n = 0; n < 3000; n++) {
    const source = pick(texts)
    const from = Math.floor(random() * source.length)
    const query = source.slice(from, from + 3 + Math.floor(random() * 70))
    const variant = random() < 0.3 ? query.toUpperCase() : query
    const match = pairMatch(variant)
    if (match === undefined) continue
    const holding = texts.flatMap((text, i) => text.toLowerCase().includes(variant.toLowerCase()) ? [i + 1] : [])
    const got = new Set(matches.all(match) as number[])
    const lost = holding.filter((id) => !got.has(id))
    if (lost.length > 0) t.fail(`${JSON.stringify(variant)}: ${lost.length} passages lost`, { match })
    checked++
    if (got.size < texts.length / 2) narrowed++
  }
  t.ok(checked > 1000, `${checked} queries checked`)
  t.ok(narrowed > checked / 2, `the pairs narrow most of them (${narrowed})`)
})
