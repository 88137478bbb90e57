import t from 'tap'
import { build, pairIndexCaughtUp, signup, uploadDocument, type TestUser, searching } from '../helper.js'
import { queryGrams, createIndexWalk, type FinderTuning } from '../../src/knowledge/index-walk.js'
import { readableParams, readableWhere } from '../../src/knowledge/readers.js'
import { ftsPhrase } from '../../src/knowledge/query.js'
import { pairMatch, pairTokens, passageTokens } from '../../src/knowledge/phrase-index.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
/** the rowids of a finder's rows, in order */
const ids = (rows: Array<{ rowid: number }>) => rows.map((r) => r.rowid)

t.test('queryGrams: every three code points, distinct', async (t) => {
  t.same(queryGrams('abcab'), ['abc', 'bca', 'cab'])
  t.same(queryGrams('ab'), [])
  t.same(queryGrams('a😀bc'), ['a😀b', '😀bc'])
})

t.test('the candidate walk finds exactly what the phrase walk finds, newest first, within the read rules',
  async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS } })
    const a = await signup(app)
    const b = await signup(app)
    // one passage per line (chunks of 60 characters), with the awkward cases among plain filler
    const special = [
      'The rebuilding plan was undocumented below the fold.', // a query starting mid-word: "documented below"
      'Spring cleaning: hooks deferred until the cleanup.', // ending mid-word: "hooks def"
      'Names (first, last) joined as "first,last" here.', // across punctuation: "first,last"
      'Une ÉCOLE normale à Paris, façade rénovée.', // non-ASCII, case folded: "école normale"
      'Straße und Fluß; ΟΔΟΣ ΑΘΗΝΑΣ is a street.', // German and Greek capitals
      'It is one of the best of the lot.', // a phrase with stop words: "of the best"
      'Plain words repeat: zebra zebra crossing.',
      'Des Maſses wegen, ſagte er.', // long s: the index folds it to s, JavaScript's toLowerCase does not
      'Each call takes 5 µs per run of the loop.', // micro sign: the index folds it to a Greek mu
      'A string and a spring and a ring and more.' // `ing and`: a first word ending several words (their forms)
    ]
    const filler = Array.from({ length: 400 }, (_, i) => `Filler line ${i} about cleaning and plans of the fold.`)
    const lines = filler.flatMap((f, i) => (i % 57 === 3 ? [f, special[(i / 57) | 0]] : [f]))
      .map((l) => l.padEnd(60, ' ').slice(0, 60))
    await uploadDocument(app, a, { filename: 'a.txt', content: lines.join('') }, { chunkSize: '60', chunkOverlap: '0' })
    await uploadDocument(app, a, { filename: 'a2.txt', content: special.map((l) => l.padEnd(60, ' ')).join('') },
      { chunkSize: '60', chunkOverlap: '0' })
    await uploadDocument(app, b, { filename: 'foreign.txt', content: special.map((l) => l.padEnd(60, ' ')).join('') },
      { chunkSize: '60', chunkOverlap: '0' })

    const reader = (u: TestUser) => ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] })
    const phraseWalk = searching(t, app)[0].prepare(`SELECT p.rowid FROM knowledge_passages_fts
      JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid
      JOIN knowledge_documents d ON d.id = p.document_id
      WHERE knowledge_passages_fts MATCH @match AND ${readableWhere({})}
      ORDER BY knowledge_passages_fts.rowid DESC LIMIT @want`).pluck()
    // the same, only in two rowid ranges (a filter's documents)
    const phraseWalkWithin = searching(t, app)[0].prepare(`SELECT p.rowid FROM knowledge_passages_fts
      JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid
      JOIN knowledge_documents d ON d.id = p.document_id
      WHERE knowledge_passages_fts MATCH @match AND ${readableWhere({})}
        AND ((p.rowid >= @from1 AND p.rowid < @to1) OR (p.rowid >= @from2 AND p.rowid < @to2))
      ORDER BY knowledge_passages_fts.rowid DESC LIMIT @want`).pluck()
    const textOf = app.sqlite.prepare(`SELECT text FROM knowledge_passages WHERE rowid = ?`).pluck()
    await pairIndexCaughtUp(app)
    const newest = app.sqlite.prepare(`SELECT max(rowid) FROM knowledge_passages`).pluck().get() as number
    const setThrough = app.sqlite.prepare(`UPDATE knowledge_pairs_state SET indexed_through = ?`)
    const unindex = [app.sqlite.prepare(`DELETE FROM knowledge_passages_pairs WHERE rowid > ?`),
      app.sqlite.prepare(`DELETE FROM knowledge_passages_runs WHERE rowid > ?`)]
    const madeUp = (_: string, token: string) => [10, 1_000, 1_000_000][[...token].reduce((n, c) =>
      n * 31 + c.codePointAt(0)!, 7) % 3]
    // [name, tuning, how far the pair index has come (decreasing: the passages above leave it)]
    const tunings: Array<[string, FinderTuning, number]> = [
      ['candidates', {}, newest],
      ['candidates, then the phrase walk below them', { budget: 2, pairBudget: 2 }, newest],
      ['the phrase walk', { rareEnough: 0, probeUpTo: 0, pairBudget: 0, runs: false }, newest],
      // a first chunk of candidates, then the rest through candidates (costs say so), or the phrase walk below it
      ['a probe, then candidates', { rareEnough: 0, pairs: false, runs: false,
        costs: { candidate: 0, rarePosting: 0, posting: 1 } }, newest],
      ['a probe, then candidates up to a budget', { rareEnough: 0, pairs: false, runs: false, budget: 2,
        costs: { candidate: 0, rarePosting: 0, posting: 1 } }, newest],
      ['a probe, then the phrase walk', { rareEnough: 0, pairs: false, runs: false,
        costs: { candidate: 1e9, rarePosting: 0, posting: 0 } }, newest],
      // the run index for words in at most 2 words of the vocabulary, the trigram index for the rest
      ['runs for a few words', { runTerms: 2 }, newest],
      // the run index for every query of several words it can narrow (else the pairs, or the trigrams)
      ['runs for phrases', { phraseRuns: 'always' }, newest],
      ['runs for phrases, few words each', { phraseRuns: 'always', runTerms: 2 }, newest],
      ['runs for phrases, then the phrase walk below them', { phraseRuns: 'always', pairBudget: 2 }, newest],
      ['no runs for phrases', { phraseRuns: 'never' }, newest],
      // the pairs' first candidate, then the runs whenever they are estimated in fewer passages than the rest takes
      ['pairs, then the runs', { rareEnough: 0, pairProbe: 1 }, newest],
      ['pairs, then the runs up to a budget', { rareEnough: 0, pairProbe: 1, pairBudget: 3 }, newest],
      ['a probe of none (read as one)', { pairProbe: 0 }, newest],
      ['a probe of none, the runs weighed', { pairProbe: 0, rareEnough: 0 }, newest],
      // made-up counts of the pair tokens: prefixes left out, pairs of `near` asked alone
      ['pairs by their counts', { pairDensity: madeUp }, newest],
      // a dense last prefix left out: after a first chunk, the rest through the phrase with it, or without it
      ['pairs by their counts, then the prefix', { pairDensity: madeUp, pairProbe: 1, costs: { prefixPosting: 0 } },
        newest],
      ['pairs by their counts, never the prefix', { pairDensity: madeUp, pairProbe: 1,
        costs: { prefixPosting: 1e9 } }, newest],
      ['pairs by their counts, then the prefix up to a budget', { pairDensity: madeUp, pairBudget: 2,
        costs: { prefixPosting: 0 } }, newest],
      ['the pair index halfway, the trigram index above it', {}, Math.floor(newest / 2)],
      ['runs for phrases halfway, the trigram index above them', { phraseRuns: 'always' }, Math.floor(newest / 2)],
      ['no pair index yet', {}, 0]
    ]
    const queries = ['documented below', 'hooks def', 'first,last', 'école normale', 'ÉCOLE NORMALE', 'strasse',
      'straße', 'ΟΔΟΣ', 'οδος', 'of the best', 'of the', 'zebra', 'cleaning and', 'Filler line 1', 'absent words',
      'ing', 'the fold.', 'des masses', 'SAGTE', 'DES MAS', 'of the fold', 'ne 1', 'line 12 about c',
      'Filler line 1'.repeat(20), 'abcdefghijklmnopqrstuvwxyz'.repeat(5), 'µs per run', 'μs per run', 's per run',
      'one of the be', 'it is one of', 'calls take', 'line 12 about cl', 'plans of th', 'the lot', 'hooks deferred un',
      // one word: the run index (exact when the query is the word alone, else its candidates are checked)
      'documented', 'OCUMENT', 'undocumented', 'ſagte', 'Maſses', 'ΑΘΗΝΑΣ', 'rénovée', 'façade,', '(first', 'first,',
      '"first', 'line', 'lle', 'µs', 'µsp', 'Fluß;', 'absent', 'zzzzz', '12 ', ' 123', 'cleaning:', 'fold.',
      // several words through the runs: whole inner words, a first that ends one, a last that starts one
      'ebra cross', 'rebuilding plan was undoc', 'a b', 'ng: hooks', 'ilbo ne', 'plan  was', 'Straße und Flu',
      'ſagte er', 'Maſses wegen', 'normale à pa', ' best of ', 'of the best of', 'ine 1 ab',
      // a first word that ends several words of the vocabulary (cleaning, Spring, rebuilding): its forms ORed
      'ing and pla', 'ing: hooks', 'lding plan', 'ing and', 'ler line 3 about', 'ler line',
      // punctuation at either end or inside (pairs version 2: a punctuation character is a unit of its own)
      ', last) joined', '(first, last', 'first, last) j', ') joined as', 'Paris, fa', ', façade', 'the lot.',
      ': hooks deferred', 'ps: hooks', '"first,last" here', 'last" here.', 'Straße und Fluß;', ', ſagte er.',
      'wegen, ſ', 'ed below the fold.', ' (first, ', '; ΟΔΟΣ',
      // a first run of one character (its ends in `near`), a last word of 2 (the words it begins, exact)
      'g and a ri', 'a spring and', 'e lot.', 's 5 µs', 'e best of th', 'A string an', 'g and a', 'It is', 'one of',
      'ebra zebra cr', 's per run of', 'r line 2']
    t.ok(queries.filter((q) => pairMatch(q, madeUp)?.match !== pairMatch(q)?.match).length >= 3,
      'the counts change the pairs asked')
    t.ok(queries.filter((q) => pairMatch(q, madeUp)?.narrow).length >= 2, 'and leave out dense prefixes')
    // the pair index is asked: a passage whose pairs are gone (the mark kept) is not found through it
    const byPairs = createIndexWalk(...searching(t, app))
    const byTrigrams = createIndexWalk(...searching(t, app), { pairs: false })
    const holding = byTrigrams(reader(a), {}, 'cleaning: hooks deferred', 200).map((r) => r.rowid)
    t.equal(holding.length, 2)
    t.same(byPairs(reader(a), {}, 'cleaning: hooks deferred', 200).map((r) => r.rowid), holding)
    app.sqlite.prepare(`DELETE FROM knowledge_passages_pairs WHERE rowid = ?`).run(holding[0])
    t.same(byPairs(reader(a), {}, 'cleaning: hooks deferred', 200).map((r) => r.rowid), holding.slice(1),
      'the pairs are what is asked')
    app.sqlite.prepare(`INSERT INTO knowledge_passages_pairs (rowid, near, far, head)
      VALUES (?, @near, @far, @head)`)
      .run(holding[0], pairTokens(textOf.get(holding[0]) as string))
    // a first run of one character too, asked as its ends in `near` (before, it was left out and nothing was left)
    t.equal(pairMatch('s per '), undefined)
    const perRun = ids(byTrigrams(reader(a), {}, 's per ', 200))
    t.equal(perRun.length, 1)
    t.same(ids(byPairs(reader(a), {}, 's per ', 200)), perRun)
    app.sqlite.prepare(`DELETE FROM knowledge_passages_pairs WHERE rowid = ?`).run(perRun[0])
    t.same(ids(byPairs(reader(a), {}, 's per ', 200)), perRun.slice(1), 'the ends of `s` are what is asked')
    app.sqlite.prepare(`INSERT INTO knowledge_passages_pairs (rowid, near, far, head)
      VALUES (?, @near, @far, @head)`)
      .run(perRun[0], pairTokens(textOf.get(perRun[0]) as string))
    // and the run index for one word: a passage whose runs are gone is not found through it, unless the word is in
    // more words of the vocabulary than the finder asks for
    const dropRuns = app.sqlite.prepare(`DELETE FROM knowledge_passages_runs WHERE rowid = ?`)
    const reindexRuns = app.sqlite.prepare(`INSERT INTO knowledge_passages_runs (rowid, runs) VALUES (?, ?)`)
    /** `check` with the passage `rowid` left out of the run index (and in it again after) */
    const withoutRuns = (rowid: number, check: () => void) => {
      dropRuns.run(rowid)
      try {
        check()
      } finally {
        reindexRuns.run(rowid, passageTokens(textOf.get(rowid) as string).runs.join(' '))
      }
    }
    const findWith = (tuning: FinderTuning) => createIndexWalk(...searching(t, app), tuning)
    const zebras = ids(byTrigrams(reader(a), {}, 'zebra', 200))
    t.equal(zebras.length, 2)
    const byRuns = createIndexWalk(...searching(t, app))
    t.same(ids(byRuns(reader(a), {}, 'zebra', 200)), zebras)
    withoutRuns(zebras[0], () => {
      t.same(ids(byRuns(reader(a), {}, 'zebra', 200)), zebras.slice(1), 'the runs are what is asked')
      // (when its rarest trigram is in more passages than `rareEnough`: 0 here)
      t.same(ids(findWith({ rareEnough: 0 })(reader(a), {}, 'zebra ', 200)), zebras.slice(1),
        'the runs give the candidates of a word with more around it')
      t.same(ids(byRuns(reader(a), {}, 'zebra ', 200)), zebras, 'unless its rarest trigrams are rare')
      t.same(ids(findWith({ runTerms: 0 })(reader(a), {}, 'zebra', 200)), zebras,
        'a word in more words than asked for goes to the trigram index')
    })
    // among given passages (what hybrid search's words part shows may hold the query): the newest that do, readable
    const everyId = app.sqlite.prepare(`SELECT rowid FROM knowledge_passages ORDER BY rowid DESC`).pluck()
      .all() as number[]
    const among = createIndexWalk(...searching(t, app)).among
    for (const q of ['zebra', 'of the', 'école normale', 'des masses', 'first,last', 'Filler line 1']) {
      const all = ids(byTrigrams(reader(a), {}, q, 200))
      t.ok(all.length > 0)
      t.same(ids(among(reader(a), {}, q, everyId, 200)), all, `among every passage: ${q}`)
      t.same(ids(among(reader(a), {}, q, everyId, 1)), all.slice(0, 1), `the newest: ${q}`)
      t.same(ids(among(reader(a), {}, q, all.slice(1), 200)), all.slice(1), `only those given: ${q}`)
    }
    t.same(among(reader(b), {}, 'Filler line 1', everyId, 200), [], 'never another organization\'s')
    // a word with a rarer part around it: `cleaning` is in every filler line, `ng:` in one passage of ours
    const colons = ids(byTrigrams(reader(a), {}, 'cleaning:', 200))
    t.equal(colons.length, 2)
    withoutRuns(colons[0], () => t.same(ids(byRuns(reader(a), {}, 'cleaning:', 200)), colons,
      'a word with a rarer part around it goes to the trigram index'))
    // several words: the runs as words, the first as the end of one, the last as the start of one
    const phrase = 'hooks deferred un'
    const deferred = ids(byTrigrams(reader(a), {}, phrase, 200))
    t.equal(deferred.length, 2)
    withoutRuns(deferred[0], () => {
      t.same(ids(findWith({ phraseRuns: 'always' })(reader(a), {}, phrase, 200)), deferred.slice(1),
        'a phrase through the runs')
      t.same(ids(findWith({ phraseRuns: 'never' })(reader(a), {}, phrase, 200)), deferred, 'or not')
    })
    // the pairs first, and the runs below them once the pairs' first candidates (here 1) prove sparser than them
    withoutRuns(deferred[1], () => {
      t.same(ids(findWith({ rareEnough: 0, pairProbe: 1 })(reader(a), {}, phrase, 200)), deferred.slice(0, 1),
        'the pairs, then the runs')
      t.same(ids(findWith({ pairProbe: 1 })(reader(a), {}, phrase, 200)), deferred,
        'the pairs alone while they take few candidates')
    })

    for (const [name, tuning, through] of tunings) {
      // one transaction: the index worker never sees the mark below pairs it would index again
      app.sqlite.transaction(() => {
        for (const u of unindex) u.run(through)
        setThrough.run(through)
      })()
      const find = createIndexWalk(...searching(t, app), tuning)
      for (const q of queries) {
        for (const want of [1, 3, 200]) {
          const expected = phraseWalk.all({ ...readableParams(reader(a), {}), match: ftsPhrase(q), want }) as number[]
          const got = find(reader(a), {}, q, want)
          t.same(got.map((r) => r.rowid), expected, `${name}: ${JSON.stringify(q)}, ${want}`)
          t.ok(got.every((r) => r.doc_id !== undefined && r.file_name !== 'foreign.txt'), 'never a foreign passage')
        }
        // within two ranges: the newest third and the oldest third (either side of the pair index's mark)
        const third = Math.floor(newest / 3)
        const ranges = { from1: newest - third, to1: newest + 1, from2: 1, to2: third }
        const within: Array<[bigint, bigint]> = [[BigInt(ranges.from1), BigInt(ranges.to1)],
          [BigInt(ranges.from2), BigInt(ranges.to2)]]
        for (const want of [1, 3, 200]) {
          const expected = phraseWalkWithin.all({ ...readableParams(reader(a), {}), ...ranges, match: ftsPhrase(q),
            want }) as number[]
          t.same(find(reader(a), {}, q, want, undefined, () => within).map((r) => r.rowid), expected,
            `${name}, within ranges: ${JSON.stringify(q)}, ${want}`)
        }
      }
      t.match(textOf.get(find(reader(a), {}, 'documented below', 200).at(-1)!.rowid), /undocumented below/,
        `${name}: the match inside a word is found`)
      t.equal(find(reader(a), {}, 'hooks def', 200).length, 2, `${name}: the match ending inside a word is found`)
      t.equal(find(reader(a), {}, 'école normale', 200).length, 2, `${name}: non-ASCII text, case folded`)
      t.equal(find(reader(a), {}, 'des masses', 200).length, 1, `${name}: where the index folds case differently`)
      t.equal(find(reader(b), {}, 'zebra zebra', 200).length, 1, `${name}: the other organization reads its own`)
      t.same(find(reader(b), {}, 'Filler line', 200), [], `${name}: and never ours`)
    }
  })

t.test('the ends of a first letter follow the vocabulary, also when it is made again with the same version',
  async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS } })
    const u = await signup(app)
    const reader = { customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] }
    await uploadDocument(app, u, { filename: 'a.txt', content: 'Each call takes 5 µs per run of the loop.' })
    await pairIndexCaughtUp(app)
    const byPairs = createIndexWalk(...searching(t, app))
    const byTrigrams = createIndexWalk(...searching(t, app), { pairs: false })
    t.equal(byPairs(reader, {}, 's per ', 50).length, 1, 'the ends are read')
    await uploadDocument(app, u, { filename: 'b.txt', content: 'The zzqs per run is new.' })
    await pairIndexCaughtUp(app)
    const both = ids(byTrigrams(reader, {}, 's per ', 50))
    t.equal(both.length, 2)
    t.same(ids(createIndexWalk(...searching(t, app))(reader, {}, 's per ', 50)), both,
      'a word added since (its end `qs`)')
    // the vocabulary emptied and filled again (made_with unchanged), the new word first: ids given again, below the
    // last one the first finder read
    const words = app.sqlite.prepare(`SELECT term FROM knowledge_run_terms ORDER BY id`).pluck().all() as string[]
    app.sqlite.transaction(() => {
      app.sqlite.exec(`DELETE FROM knowledge_run_terms`)
      const add = app.sqlite.prepare(`INSERT INTO knowledge_run_terms (term) VALUES (?)`)
      for (const w of ['zzqs', ...words.filter((w) => w !== 'zzqs')]) add.run(w)
      app.sqlite.exec(`INSERT INTO knowledge_run_terms_fts (knowledge_run_terms_fts) VALUES ('rebuild')`)
    })()
    const fresh = createIndexWalk(...searching(t, app))
    t.same(ids(fresh(reader, {}, 's per ', 50)), both)
    t.same(ids(byPairs(reader, {}, 's per ', 50)), both, 'a kept reading of the ends is read again')
  })

t.test('a word longer than FTS5 keeps of a token (32,768 bytes) and a lone surrogate in the query', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  // two words of 17,003 Cyrillic letters (34,006 bytes) that differ only after their first 32,768 bytes
  const base = 'д'.repeat(17_000)
  await uploadDocument(app, u, { filename: 'long.txt', content: `Intro ${base}кот end\n\nOther ${base}пёс end` },
    { chunkSize: '20000', chunkOverlap: '0' })
  await pairIndexCaughtUp(app)
  const reader = { customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] }
  const find = createIndexWalk(...searching(t, app))
  const byTrigrams = createIndexWalk(...searching(t, app), { runs: false })
  const cat = byTrigrams(reader, {}, 'дкот', 10)
  t.equal(cat.length, 1)
  t.match(cat[0].text, /дкот/)
  t.same(ids(find(reader, {}, 'дкот', 10)), ids(cat),
    'the run index\'s candidates are checked: FTS5 cut both words to the same token')
  t.same(ids(find(reader, {}, 'ддпёс', 10)), ids(byTrigrams(reader, {}, 'ддпёс', 10)))
  // a lone surrogate: SQLite reads it as U+FFFD, and so does the check after
  await uploadDocument(app, u, { filename: 'fffd.txt', content: 'broken \ufffd here' })
  await pairIndexCaughtUp(app)
  for (const q of ['n \ud800 h', 'broken \ud800', '\ud800 here', 'roken\ud800']) {
    const expected = ids(byTrigrams(reader, {}, q.toWellFormed(), 10))
    t.same(ids(find(reader, {}, q, 10)), expected, JSON.stringify(q))
    t.same(ids(byTrigrams(reader, {}, q, 10)), expected)
  }
  t.equal(find(reader, {}, 'broken \ud800', 10).length, 1)
})

t.test('a phrase whose pairs hold few matches: its candidates sieved by the run index for its first run', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  // `resolution is not` asks `"lution_is"`: every `solution is not` line is a candidate too
  const lines = Array.from({ length: 60 }, (_, i) => i % 20 === 5 ? `A resolution is not taken, line ${i}.`
    : `The solution is not here, line ${i}.`).map((l) => l.padEnd(60, ' '))
  await uploadDocument(app, a, { filename: 'a.txt', content: lines.join('') }, { chunkSize: '60', chunkOverlap: '0' })
  await pairIndexCaughtUp(app)
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const query = 'resolution is not'
  t.match(pairMatch(query)?.match, /"lution_is"/, 'the pairs keep the first word\'s last 6 characters')
  const expected = ids(createIndexWalk(...searching(t, app), { pairs: false, runs: false })(reader, {}, query, 200))
  t.equal(expected.length, 3)
  // first chunks of 2 candidates: the first proves sparse, the next are sieved
  const sieved = createIndexWalk(...searching(t, app), { pairProbe: 1, phraseRuns: 'weigh', rareEnough: 1e9 })
  t.same(ids(sieved(reader, {}, query, 200)), expected, 'every match, newest first')
  // each candidate looked up in the run index, not its rowids in the chunk's stretch read
  const lookedUp = createIndexWalk(...searching(t, app), { pairProbe: 1, phraseRuns: 'weigh', rareEnough: 1e9,
    sieveSpan: 0 })
  t.same(ids(lookedUp(reader, {}, query, 200)), expected, 'every match, each candidate looked up')
  // a passage whose runs are gone is not found once the candidates are sieved: the runs are what is asked
  const textOf = app.sqlite.prepare(`SELECT text FROM knowledge_passages WHERE rowid = ?`).pluck()
  const oldest = expected[expected.length - 1]
  app.sqlite.prepare(`DELETE FROM knowledge_passages_runs WHERE rowid = ?`).run(oldest)
  try {
    t.same(ids(sieved(reader, {}, query, 200)), expected.slice(0, -1), 'sieved by the run index')
    t.same(ids(lookedUp(reader, {}, query, 200)), expected.slice(0, -1), 'either way')
    const whole = createIndexWalk(...searching(t, app), { pairProbe: 1000, phraseRuns: 'weigh', rareEnough: 1e9 })
    t.same(ids(whole(reader, {}, query, 200)), expected, 'a first chunk of every candidate: none sieved')
  } finally {
    app.sqlite.prepare(`INSERT INTO knowledge_passages_runs (rowid, runs) VALUES (?, ?)`)
      .run(oldest, passageTokens(textOf.get(oldest) as string).runs.join(' '))
  }
})
