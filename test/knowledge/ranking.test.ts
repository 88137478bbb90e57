import t from 'tap'
import { build, searching, signup, uploadDocument, type TestUser } from '../helper.js'
import { createSearch } from '../../src/knowledge/search.js'
import { queryTerms } from '../../src/knowledge/query.js'
import type { App } from '../../src/app.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
const reader = (u: TestUser) => ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] })
const NO_FIELDS = { section: 0, headings: 0, title: 0, defined: 0 }

async function search(app: App, user: TestUser, query: string, mode: string) {
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: user.auth,
    payload: { query, mode } })
  if (res.statusCode !== 200) throw new Error(`search failed: ${res.statusCode} ${res.body}`)
  return res.json().results as Array<{ document: { fileName: string } }>
}

t.test('a passage under a heading naming the query\'s word ranks above one that only mentions it as often; ' +
  'another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  // the defining section (its text holds the word twice, with its heading line) is the older upload and the longer
  // passage: without the heading fields it would rank second
  await uploadDocument(app, u, { filename: 'defines.md', content: '# Reference\n\n## Zephyrcache\n\n' +
    'It keeps the zephyrcache entries for a while before the sweeper drops the oldest of them.\n' })
  await uploadDocument(app, u, { filename: 'mentions.md', content: '# Notes\n\n## Gardening\n\n' +
    'The zephyrcache came up beside the roses, and the zephyrcache again by the wall.\n' })
  for (const mode of ['words', 'hybrid']) {
    t.same((await search(app, u, 'zephyrcache', mode)).map((r) => r.document.fileName), ['defines.md', 'mentions.md'],
      `${mode}: the section named for the word first`)
    t.same(await search(app, other, 'zephyrcache', mode), [], `${mode}: another organization finds nothing`)
  }
  // the rule is what orders them: without the heading fields (and the heading naming the word) the shorter, newer
  // mention wins
  const plain = createSearch(...searching(t, app), { settings: { words: { fields: NO_FIELDS, defines: 0 } } })
  t.same((await plain.search(reader(u), {}, 'zephyrcache', 10, 'words')).map((h) => h.document.fileName),
    ['mentions.md', 'defines.md'], 'without the fields, text alone decides')
  // on the bounded path too (every candidate rescored with its heading path)
  const bounded = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  t.same((await bounded.search(reader(u), {}, 'zephyrcache', 10, 'words')).map((h) => h.document.fileName),
    ['defines.md', 'mentions.md'], 'words-bounded ranks by the heading as well')
})

t.test('proximity: of two passages holding the same words as often, the one holding them close together ranks ' +
  'first; another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  // (other passages, so that the two words are rare enough to weigh)
  for (const name of ['one', 'two', 'three']) {
    await uploadDocument(app, u, { filename: `${name}.txt`, content: `Unrelated notes, part ${name}.` })
  }
  // the same words, as many of each: only where they stand differs; the close one is the older (ties go newest first)
  await uploadDocument(app, u, { filename: 'close.txt',
    content: 'amberfold latticework holds here while other filler words stand apart today.' })
  await uploadDocument(app, u, { filename: 'apart.txt',
    content: 'amberfold holds here while other filler words stand apart latticework today.' })
  for (const mode of ['words', 'hybrid']) {
    t.same((await search(app, u, 'amberfold latticework', mode)).map((r) => r.document.fileName),
      ['close.txt', 'apart.txt'], `${mode}: the words together first`)
    t.same(await search(app, other, 'amberfold latticework', mode), [], `${mode}: another organization finds nothing`)
  }
  const without = createSearch(...searching(t, app), { settings: { words: { proximity: 0 } } })
  t.same((await without.search(reader(u), {}, 'amberfold latticework', 10, 'words')).map((h) => h.document.fileName),
    ['apart.txt', 'close.txt'], 'without proximity they tie, and the newer goes first')
  const bounded = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  t.same((await bounded.search(reader(u), {}, 'amberfold latticework', 10, 'words')).map((h) => h.document.fileName),
    ['close.txt', 'apart.txt'], 'words-bounded too')
})

t.test('a word in most passages still counts (IDF ln(1 + …)): a passage holding both query words ranks above one ' +
  'holding the rarer twice; another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  // mossberry is in 4 of the 5 passages: its Robertson–Spärck Jones weight ln((N − df + 0.5) / (df + 0.5)) is below 0
  for (const name of ['one', 'two', 'three']) {
    await uploadDocument(app, u, { filename: `${name}.txt`, content: `Mossberry jam recipe notes, part ${name}.` })
  }
  await uploadDocument(app, u, { filename: 'both.txt', content: 'lanternwick mossberry.' })
  await uploadDocument(app, u, { filename: 'twice.txt', content: 'lanternwick, lanternwick.' })
  const names = (hits: Array<{ document: { fileName: string } }>) => hits.map((h) => h.document.fileName)
  for (const mode of ['words', 'hybrid']) {
    t.same(names(await search(app, u, 'lanternwick mossberry', mode)).slice(0, 2), ['both.txt', 'twice.txt'],
      `${mode}: both words first`)
    t.same(await search(app, other, 'lanternwick mossberry', mode), [], `${mode}: another organization finds nothing`)
  }
  // the rule is what orders them: with the floored weight the common word counts for nothing, and the rarer word
  // twice wins
  const floored = createSearch(...searching(t, app), { settings: { words: { idf: 'robertson' } } })
  t.same(names(await floored.search(reader(u), {}, 'lanternwick mossberry', 10, 'words')).slice(0, 2),
    ['twice.txt', 'both.txt'], 'with the floored IDF the rarer word twice goes first')
  const bounded = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  t.same(names(await bounded.search(reader(u), {}, 'lanternwick mossberry', 10, 'words')).slice(0, 2),
    ['both.txt', 'twice.txt'], 'words-bounded too')
})

t.test('a dotted name is sought as written and by its parts: the page defining the method under its class is found ' +
  'though it never writes the two together; another organization finds neither', async (t) => {
  t.same(queryTerms('Counter.most_common'), [['counter', 'most', 'common'], ['counter'], ['most', 'common']])
  // (a product name, a version, an abbreviation: one phrase as before)
  t.same(queryTerms('Node.js 3.11 e.g.'), [['node', 'js'], ['3', '11'], ['e', 'g']])
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  await uploadDocument(app, u, { filename: 'defines.md', content: '# Reference\n\n## class quillon.Gallimaufry\n\n' +
    'A gallimaufry keeps tallies of what it is given.\n\n`tallyhover_best(n)`: the n largest tallies.\n' })
  await uploadDocument(app, u, { filename: 'contents.md', content: '# Contents\n\n- Gallimaufry.tallyhover_best\n' })
  await uploadDocument(app, u, { filename: 'unrelated.md', content: '# Garden\n\nThe roses by the wall.\n' })
  const names = (hits: Array<{ document: { fileName: string } }>) => hits.map((h) => h.document.fileName).sort()
  for (const mode of ['words', 'hybrid']) {
    t.same(names(await search(app, u, 'Gallimaufry.tallyhover_best', mode)), ['contents.md', 'defines.md'],
      `${mode}: the literal and the definition`)
    t.same(await search(app, other, 'Gallimaufry.tallyhover_best', mode), [],
      `${mode}: another organization finds nothing`)
  }
})

t.test('a passage of a document titled with the query\'s word ranks above the same text in another document; ' +
  'another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  // the same text: only the titles (the file names) differ, and the titled one is the older (ties go newest first)
  await uploadDocument(app, u, { filename: 'quorvane.txt', content: 'A note on quorvane, kept for later.' })
  await uploadDocument(app, u, { filename: 'notes.txt', content: 'A note on quorvane, kept for later.' })
  const names = (hits: Array<{ document: { fileName: string } }>) => hits.map((h) => h.document.fileName)
  for (const mode of ['words', 'hybrid']) {
    t.same(names(await search(app, u, 'quorvane', mode)), ['quorvane.txt', 'notes.txt'], `${mode}: the titled first`)
    t.same(await search(app, other, 'quorvane', mode), [], `${mode}: another organization finds nothing`)
  }
  const untitled = createSearch(...searching(t, app), { settings: { words: { fields: { title: 0 } } } })
  t.same(names(await untitled.search(reader(u), {}, 'quorvane', 10, 'words')), ['notes.txt', 'quorvane.txt'],
    'without the title field they tie, and the newer goes first')
})

t.test('a passage naming the query\'s key word as a defined term ranks above one that mentions it in a sentence; ' +
  'another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  // the same words, as many of each and as long: one line defines the word ("term: definition"), the other uses it;
  // the defining one is the older (ties go newest first)
  await uploadDocument(app, u, { filename: 'glossary.txt',
    content: 'quillborne: the sweeper keeps entries for a while.' })
  await uploadDocument(app, u, { filename: 'notes.txt', content: 'the sweeper keeps quillborne entries for a while.' })
  const names = (hits: Array<{ document: { fileName: string } }>) => hits.map((h) => h.document.fileName)
  for (const mode of ['words', 'hybrid']) {
    t.same(names(await search(app, u, 'quillborne', mode)), ['glossary.txt', 'notes.txt'],
      `${mode}: the definition first`)
    t.same(await search(app, other, 'quillborne', mode), [], `${mode}: another organization finds nothing`)
  }
  const without = createSearch(...searching(t, app), { settings: { words: { defines: 0 } } })
  t.same(names(await without.search(reader(u), {}, 'quillborne', 10, 'words')), ['notes.txt', 'glossary.txt'],
    'without the rule they tie, and the newer goes first')
  const bounded = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  t.same(names(await bounded.search(reader(u), {}, 'quillborne', 10, 'words')), ['glossary.txt', 'notes.txt'],
    'words-bounded too')
})

t.test('after the first five places, a document not shown yet goes before a further passage of one already shown; ' +
  'another organization finds neither', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  const filler = 'The sweeper walks the rows at dusk and writes down what it finds along the way. '.repeat(10)
  // seven passages holding the word twice each (one a chunk), and one passage holding it once among more words
  await uploadDocument(app, u, { filename: 'long.md', content: Array.from({ length: 7 }, (_, i) =>
    `## Part ${i + 1}\n\nvellicord ${filler}vellicord.\n`).join('\n') })
  await uploadDocument(app, u, { filename: 'short.md', content: `# Aside\n\n${filler}${filler}vellicord.\n` })
  // (the long document makes 7 or more passages, every one scoring above the short one's; the words never stand
  // together, so hybrid's substring part adds nothing)
  const QUERY = 'sweeper vellicord'
  const place = (hits: Array<{ document: { fileName: string } }>) => hits.map((h) => h.document.fileName)
    .indexOf('short.md')
  for (const mode of ['words', 'hybrid']) {
    t.equal(place(await search(app, u, QUERY, mode)), 5, `${mode}: the other document sixth`)
    t.same(await search(app, other, QUERY, mode), [], `${mode}: another organization finds nothing`)
  }
  const without = createSearch(...searching(t, app), { settings: { words: { diversity: { factor: 1 } } } })
  const plain = await without.search(reader(u), {}, QUERY, 10, 'words')
  t.ok(place(plain) > 5, 'without the rule, by score alone: the other further down')
  const bounded = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 10 } } })
  t.equal(place(await bounded.search(reader(u), {}, QUERY, 10, 'words')), 5,
    'words-bounded too')
})
