import t from 'tap'
import Database from 'better-sqlite3'
import { MAX_LAST_FORMS, pairMatch, pairTokens, passageTokens, PAIR_WORD_MAX, type NearEnds, type PairDensity,
  type WordEnds, type WordStarts } from '../../src/knowledge/phrase-index.js'

/** pairMatch's expression (the one asked first) */
const matchOf = (query: string, density?: PairDensity, endings?: WordEnds, starts?: WordStarts, nearEnds?: NearEnds) =>
  pairMatch(query, density, endings, starts, nearEnds)?.match
import { indexFold, isAscii } from '../../src/knowledge/fold.js'
import { ftsPhrase } from '../../src/knowledge/query.js'

const near = (text: string) => pairTokens(text).near
/** an ASCII punctuation character as it stands in a token */
const p = (c: string) => String.fromCharCode(0xe000 + c.charCodeAt(0))
t.test('isAscii: only ASCII characters (a lone surrogate is not)', async (t) => {
  t.ok(isAscii(''))
  t.ok(isAscii('Plain text, 100 % ASCII ~ \u007f'))
  for (const s of ['é', 'x\u0080', 'µs', '\u{1F600}', '\ud800', 'a\udc00b', 'ſ']) t.notOk(isAscii(s), JSON.stringify(s))
  t.equal(indexFold('Des Maſses'), 'des masses', 'a non-ASCII text still folds as the index does')
})
t.test('pairTokens: the end of a word (2 characters, 6), the separator, the next word', async (t) => {
  t.same(pairTokens('Weeks of Parental leave'), { near: 'ks_of of_parental al_leave',
    far: 'weeks_of of_parental rental_leave', head: 'weeks_o of_p rental_l' },
  '`head`: `far` with the second unit cut to its first character')
  t.equal(near('e-mail, then  x'), `e|${p('-')} ${p('-')}|mail il|${p(',')} ${p(',')}_then en|x`,
    'a punctuation character is a unit; anything but one space is `|`')
  const comma = p(',')
  // a punctuation character: alone in `near`, with the last 6 characters up to it without white space in `far`
  t.same(pairTokens('case, the list'), { near: `se|${comma} ${comma}_the he_list`,
    far: `case|${comma} case${comma}_the the_list`, head: `case|${comma} case${comma}_t the_l` })
  t.equal(pairTokens('the library, so (e-mail)').far, `the_library ibrary|${comma} brary${comma}_so so_${p('(')} ` +
    `${p('(')}|e e|${p('-')} ${p('(')}e${p('-')}|mail mail|${p(')')}`)
  t.equal(pairTokens(`${'\u{1D400}'.repeat(10)}, x`).far.split(' ')[1], `${'\u{1D400}'.repeat(5)}${comma}_x`,
    'the last 6 characters, not UTF-16 units: astral letters')
  const long = `${'東京'.repeat(5_000)},${'ab,'.repeat(3)} x`
  t.equal(pairTokens(long).far.split(' ').at(-1), `ab${comma}ab${comma}_x`,
    'a long stretch without white space: its last 6 characters')
  const [low, bar, quote] = [p('_'), p('|'), p('"')]
  t.equal(near('a_b|c "d" — ¶'), `a|${low} ${low}|b b|${bar} ${bar}|c c_${quote} ${quote}|d d|${quote} ` +
    `${quote}_— —_¶`, '`_`, `|` and quotes stand in as well; non-ASCII punctuation as itself')
  t.equal(near('a b'), 'a_b', 'a one-letter word is whole')
  t.same(pairTokens('lonely'), { near: '', far: '', head: '' })
  t.equal(pairTokens('a \u{1D400}b').head, 'a_\u{1D400}', 'a first character, not a UTF-16 unit')
  t.equal(near(`go ${'y'.repeat(50)}`), `go_${'y'.repeat(PAIR_WORD_MAX)}`, 'the second word is cut')
  t.same(pairTokens('École normale à Paris'), { near: 'le_normale le_à à_paris',
    far: 'école_normale ormale_à à_paris', head: 'école_n ormale_à à_p' }, 'non-ASCII words, lower-cased')
  t.equal(near('Des Maſses'), 'es_masses', 'folded as the trigram index folds: the long s to s')
  t.equal(near('5 µs ΟΔΟΣ ΑΘΗΝΑΣ'), '5_μs μs_οδοσ οσ_αθηνασ', 'the micro sign to mu, a final capital sigma to σ')
  t.equal(near('ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝᲡ Kılıç İl'), 'ᲝᲡ_kılıç ıç_İl', 'Georgian capitals, dotless i and İ: kept')
})

t.test('pairMatch: a phrase of the query\'s pairs in one column, the last a prefix; undefined when pairs cannot ' +
  'narrow', async (t) => {
  t.equal(matchOf('weeks of parental'), `{near}: ("ks_of" + "of_parental" *)`,
    'a first word of 2–5 characters may end a longer one: `near`')
  t.equal(matchOf('introduced by the'), `{far}: ("oduced_by" + "by_the" *)`,
    'one of 6 or more: `far`')
  t.equal(matchOf(' of parental '), `{far}: ("of_parental")`, 'separators at the ends: whole words')
  t.equal(matchOf('s of parental'), `{far}: ("of_parental" *)`,
    'a one-letter start may end any word: its pair is left out')
  t.equal(matchOf('the fold. It is'), `{near}: ("he_fold" + "ld|${p('.')}" + "${p('.')}_it" + "it_is" *)`)
  t.equal(matchOf(', the list'), `{near}: ("${p(',')}_the" + "he_list" *)`,
    'a punctuation character first is whole, but what precedes it is not known: `near`')
  t.equal(matchOf(' , the list'), `{far}: ("${p(',')}_the" + "the_list" *)`, 'white space before it: `far`')
  t.equal(matchOf('library, so'), `{far}: ("ibrary|${p(',')}" + "brary${p(',')}_so" *)`,
    'a punctuation character after 6 characters: `far`, with them')
  t.equal(matchOf('ab, cd ef'), `{near}: ("ab|${p(',')}" + "${p(',')}_cd" + "cd_ef" *)`,
    'after fewer, at the start: `near`')
  t.equal(matchOf('case of ,'), `{near}: ("se_of" + "of_${p(',')}")`, 'and last, no prefix')
  t.equal(matchOf('( ) can'), `{near}: ("${p('(')}_${p(')')}" + "${p(')')}_can" *)`)
  t.equal(matchOf('e, a'), undefined, 'a one-letter start and end left out: nothing left')
  t.equal(matchOf('to ,'), undefined, 'one pair of `near`')
  t.equal(matchOf('weeks of p words'), `{near}: ("ks_of" + "of_p" + "p_words" *)`)
  t.equal(matchOf('them weeks of p'),
    '({near}: ("em_weeks")) AND ({far}: ("weeks_of") AND {head}: (("weeks_o" + "of_p")))',
    'a one-letter end is asked in `head`, with the pair before (their ends in `far` known)')
  t.equal(matchOf('weeks of p'), undefined, 'else left out (and one pair of `near` is not asked)')
  t.equal(matchOf('weeks of p', () => 1), `{near}: ("ks_of") AND {head}: (("of_p"))`,
    'unless rare by the counts (`"of_p"` alone in `head`: its pair before is unknown in `far`)')
  t.equal(matchOf('used in'), undefined, 'one pair of `near` stands for too many passages: the trigram index')
  t.equal(matchOf('complete you'), `{far}: ("mplete_you" *)`, 'one pair of `far` narrows enough')
  t.equal(matchOf('one two three four five six seven eight nine'),
    `{near}: ("ee_four" + "ur_five" + "ve_six" + "ix_seven" + "en_eight" + "ht_nine" *)`,
    'a long phrase: the 6 neighbouring pairs with the most characters')
  t.equal(matchOf('of the of the of the of the'),
    `{near}: ("he_of" + "of_the" + "he_of" + "of_the" + "he_of" + "of_the" *)`)
  t.equal(matchOf('parental'), undefined, 'one word')
  t.equal(matchOf('s o'), undefined, 'nothing left')
  t.equal(matchOf('ΟΔΟΣ ΑΘΗΝΑΣ ODOS'), '({near}: ("οσ_αθηνασ")) AND ({far}: ("αθηνασ_odos" *))',
    'folded as the passages are (and cut at the long word: `far` after it)')
})

t.test('pairMatch with the vocabulary: a first run that may end a longer word, asked as each word\'s end',
  async (t) => {
    const checks = () => ['check', 'typecheck', 'spellcheck', 'recheck']
    t.equal(matchOf('check in a', undefined, checks),
      '{far}: (("check_in" OR "echeck_in" OR "lcheck_in")) AND {head}: (("check_i" + "in_a") OR ' +
      '("echeck_i" + "in_a") OR ("lcheck_i" + "in_a"))', 'one pair: `far` for each distinct last 6 (and `head`)')
    t.equal(matchOf('check in the', undefined, checks),
      '{far}: (("check_in" OR "echeck_in" OR "lcheck_in") AND ("in_the" *))', 'the rest\'s phrase, ANDed')
    t.equal(matchOf('check in a'), undefined, 'without it: one `near` pair, not asked')
    t.equal(matchOf(' check in a', undefined, checks), '{far}: ("check_in") AND {head}: (("check_i" + "in_a"))',
      'a whole first word needs none')
    t.equal(matchOf('check in a', undefined, () => []), undefined, 'no such word: as without')
    const many = () => Array.from({ length: 17 }, (_, i) => `${'abcdefghijklmnopq'[i]}check`)
    t.equal(matchOf('check in the', undefined, many), '{near}: ("ck_in" + "in_the" *)', 'more than 16 forms: `near`')
    t.equal(matchOf('ck in the', undefined, checks), '{near}: ("ck_in" + "in_the" *)', '2 characters: `near`')
    t.equal(matchOf('check in', undefined, checks), undefined, 'one pair, its second word a prefix: as without')
    t.equal(matchOf('check in', () => 100, checks), '{far}: (("check_in" * OR "echeck_in" * OR "lcheck_in" *))',
      'unless its forms are in at most 5,000 passages together (the index\'s counts)')
    t.equal(matchOf('check in', () => 3_000, checks), '{near}: ("ck_in" *)', 'more: as without')
    t.equal(matchOf('check inner', undefined, checks), matchOf('check inner'))
    // a comma after it: its end in `far` is what precedes it without a space (punctuation too), so the phrase is in
    // `near`; the first pair in `far` as well, ANDed
    t.equal(matchOf('not, then', undefined, () => ['not', 'cannot']),
      `{near}: ("ot|${p(',')}" + "${p(',')}_then" *) AND {far}: ("not|${p(',')}" OR "cannot|${p(',')}")`)
    t.equal(matchOf('not, then'), `{near}: ("ot|${p(',')}" + "${p(',')}_then" *)`, 'without its forms')
    // and the pairs after it in `far` (a phrase of its own, ANDed), where `en_the` stands for `when the`, `often the`…
    t.equal(matchOf('not, then the', undefined, () => ['not', 'cannot']),
      `({near}: ("ot|${p(',')}" + "${p(',')}_then") AND {far}: ("not|${p(',')}" OR "cannot|${p(',')}")) AND ` +
      '({far}: ("then_the" *))')
    t.equal(matchOf('not, then the'), `({near}: ("ot|${p(',')}" + "${p(',')}_then")) AND ({far}: ("then_the" *))`)
    t.equal(matchOf('on the path'), '{near}: ("on_the" + "he_path" *)', 'not with one pair before them')
    t.equal(matchOf('resolution, then'), '{far}: ("lution|\ue02c" + "ution\ue02c_then" *)',
      'a first word of 6 characters or more gives the comma\'s end: all in `far`')
    // the forms' counts are read only for that one pair: each is a read of the index
    const asked: string[] = []
    const counting: PairDensity = (_column, token) => { asked.push(token); return 100 }
    t.equal(matchOf('check in the list.', counting, checks),
      '{far}: (("check_in" OR "echeck_in" OR "lcheck_in") AND ("in_the" + "the_list" + "list|\ue02e"))')
    t.same(asked, [], 'several pairs, the last whole: no count read')
    matchOf('check in', counting, checks)
    t.same(asked.slice(0, 3), ['check_in', 'echeck_in', 'lcheck_in'], 'one pair that may go on: its forms counted')
  })

t.test('pairMatch with the index\'s counts: a dense last prefix left out, one rare `near` pair asked', async (t) => {
  const counts = (known: Record<string, number>): PairDensity => (column, token, and) => {
    const key = `${column} ${token}${and ? ` & ${and.column} ${and.token}` : ''}`
    const n = known[key]
    if (n === undefined) throw new Error(`not expected: ${key}`)
    return n
  }
  t.equal(matchOf('option will be', counts({ 'far will_be': 342_000, 'far option_will': 3_000 })),
    '{far}: ("option_will")', 'a prefix in 342,000 passages would be merged whole: the other pair narrows')
  t.same(pairMatch('option will be', counts({ 'far will_be': 342_000, 'far option_will': 3_000 }))?.narrow,
    { match: '{far}: ("option_will" + "will_be" *)', postings: 342_000 },
    'the phrase with the prefix left out is kept aside, with the passages holding its exact token')
  t.equal(pairMatch('option will be', counts({ 'far will_be': 15_000 }))?.narrow, undefined, 'none when kept')
  t.equal(matchOf('option will be', counts({ 'far will_be': 15_000 })),
    '{far}: ("option_will" + "will_be" *)', 'a prefix of up to 20,000 passages is kept')
  t.equal(matchOf('on the path', counts({ 'near he_path': 75_000, 'near on_the': 166_000 })),
    '{near}: ("on_the" + "he_path" *)', 'kept when the other pairs are not 4 times rarer')
  t.equal(matchOf('be used in', counts({ 'near ed_in': 269_000, 'near be_used': 10_000 })),
    '{near}: ("be_used")', 'the pair left may be one of `near`')
  t.equal(matchOf('be removed in', counts({ 'far emoved_in': 3_000 })),
    '({near}: ("be_removed")) AND ({far}: ("emoved_in" *))',
    'after one pair, a word of 5+ characters: cut there, the pair before in `near` whatever its count')
  t.equal(matchOf('option will be.', counts({ 'far option_will': 3_000, 'far will_be': 342_000 })),
    `{far}: ("option_will" + "will_be" + "be|${p('.')}")`,
    'a whole word: no prefix')
  t.equal(matchOf('used in', counts({ 'near ed_in': 269_000 })), undefined, 'one common pair of `near`: trigrams')
  t.equal(matchOf('layer thatch', counts({ 'near er_thatch': 40 })), '{near}: ("er_thatch" *)',
    'one rare pair of `near` is asked')
  t.equal(matchOf(' , the', counts({ [`far ${p(',')}_the`]: 150_000 })), undefined,
    'one dense pair whose second word may go on: the trigram walk')
  t.equal(matchOf(' , zebra', counts({ [`far ${p(',')}_zebra`]: 12 })), `{far}: ("${p(',')}_zebra" *)`,
    'a rare one is asked')
  t.equal(matchOf(' ( )', counts({})), `{far}: ("${p('(')}_${p(')')}")`, 'and one without a prefix, whatever its count')
  t.equal(matchOf('zebra herd of', counts({ 'near rd_of': 0 })), '{near}: ("ra_herd" + "rd_of" *)',
    'a prefix in no passage yet is kept')
  t.equal(matchOf('zebra quagga herd', counts({ 'far quagga_herd': 0 })),
    '({near}: ("ra_quagga")) AND ({far}: ("quagga_herd" *))', 'and cut at a long word after one pair of `near`')
  t.equal(matchOf('layer that be', counts({ 'near at_be': 150_000, 'near er_that': 60_000 })),
    '{near}: ("er_that" + "at_be" *)', 'not left out when one common pair of `near` would be all that is left')
  t.equal(matchOf('layer that be', counts({ 'near at_be': 300_000, 'near er_that': 60_000 })), undefined,
    'unless in over 200,000 passages: the trigram walk')
  t.equal(matchOf('specification 1', counts({})), '{head}: (("cation_1"))',
    'a last word of one character, in `head`, exact, whatever its count')
  t.equal(matchOf('JSON specification 1', () => 300, () => ['json', 'tojson']),
    '{far}: (("json_specification" OR "tojson_specification")) AND {head}: (("json_s" + "cation_1") OR ' +
    '("tojson_s" + "cation_1"))', 'after first forms: a phrase per form')
  t.equal(matchOf('resolve to a', () => 300), '{far}: ("esolve_to") AND {head}: (("esolve_t" + "to_a"))')
  t.equal(matchOf('are passed a', counts({ 'near re_passed': 8_000, 'head passed_a': 2_000 })),
    '{near}: ("re_passed") AND {head}: (("passed_a"))',
    'the pair before unknown in `far`: the last alone, with one `near` pair when either is rare')
  t.equal(matchOf('are passed a', counts({ 'near re_passed': 8_000, 'head passed_a': 9_000,
    'near re_passed & head passed_a': 1_100 })), '{near}: ("re_passed") AND {head}: (("passed_a"))',
  'or when the passages holding both are few')
  t.equal(matchOf('are passed a', counts({ 'near re_passed': 8_000, 'head passed_a': 9_000,
    'near re_passed & head passed_a': 6_000 })), undefined, 'else not asked')
  t.equal(matchOf('are passed a'), undefined, 'without the counts, as one `near` pair')
  t.equal(matchOf('options passed a'), '{far}: ("ptions_passed") AND {head}: (("ptions_p" + "passed_a"))')
  t.equal(matchOf('of the gyp next', counts({ 'near yp_next': 10 })), '{near}: ("of_the" + "he_gyp" + "yp_next" *)',
    'a dense first pair is kept: the phrase may be rare where its pairs are not (`to a brace-expanded`)')
  t.equal(matchOf('library, a', counts({})), `{far}: ("ibrary|${p(',')}") AND {head}: (("ibrary|${p(',')}" + ` +
    `"brary${p(',')}_a"))`, 'after punctuation, its end in `far` known')
  t.equal(matchOf('used instead o', () => 300), '{near}: ("ed_instead") AND {head}: (("nstead_o"))',
    'a letter too, in `head`')
  t.equal(matchOf('date, the', counts({ [`near te|${p(',')}`]: 30_163, [`near ${p(',')}_the`]: 262_778 })), undefined)
})

t.test('pairMatch with the vocabulary: a last run that may begin a longer word, asked as each word, exact',
  async (t) => {
    const vocabulary = ['the', 'then', 'theme', 'there', 'to', 'today', 'tool', 'toolbox', 'a', 'ab', 'abc',
      `the${'x'.repeat(40)}`]
    let asked: string[] = []
    // the vocabulary's words of 2+ UTF-16 units (word-vocabulary.ts keeps no shorter ones) that start with the run
    const starts: WordStarts = (run) => {
      asked.push(run)
      return vocabulary.filter((w) => w.length >= 2 && w.startsWith(run))
    }
    t.equal(matchOf('introduced by the', undefined, undefined, starts),
      `{far}: (("oduced_by" + "by_the") OR ("oduced_by" + "by_then") OR ("oduced_by" + "by_theme") OR ` +
      `("oduced_by" + "by_there") OR ("oduced_by" + "by_the${'x'.repeat(29)}"))`,
      'the phrase once per word the last run begins, exact; a word cut as a pair cuts it')
    t.same(asked, ['the'])
    t.equal(matchOf('complete to', undefined, undefined, starts),
      '{far}: (("mplete_to") OR ("mplete_today") OR ("mplete_tool") OR ("mplete_toolbox"))',
      'a run of 2 UTF-16 units: itself too')
    t.equal(matchOf('introduced by t', undefined, undefined, starts),
      '{far}: ("oduced_by") AND {head}: (("oduced_b" + "by_t"))', 'one character: in `head`, as without')
    asked = []
    t.equal(matchOf('introduced by the ', undefined, undefined, starts), '{far}: ("oduced_by" + "by_the")',
      'a whole last word: none asked')
    t.same(asked, [])
    t.equal(matchOf('introduced by thx', undefined, undefined, starts), '{far}: (("oduced_by" + "by_thx"))',
      'a run no word begins: itself, exact (a passage holding it would have added it)')
    t.equal(matchOf('introduced by the', undefined, undefined, () => undefined),
      '{far}: ("oduced_by" + "by_the" *)', 'unknown (more than MAX_LAST_FORMS words): a prefix, as without')
    const counts = (n: number) => () => n
    t.equal(matchOf('events and the', counts(300_000), undefined, starts),
      '{far}: (("events_and" + "and_the") OR ("events_and" + "and_then") OR ("events_and" + "and_theme") OR ' +
      `("events_and" + "and_there") OR ("events_and" + "and_the${'x'.repeat(29)}"))`,
      'however dense: no prefix is merged, so none is left out')
    t.equal(matchOf(' , the', counts(300_000), undefined, starts),
      `{far}: (("${p(',')}_the") OR ("${p(',')}_then") OR ("${p(',')}_theme") OR ("${p(',')}_there") OR ` +
      `("${p(',')}_the${'x'.repeat(29)}"))`, 'one dense pair: asked exact, not the trigram walk')
    t.equal(matchOf('used to', counts(300_000), undefined, starts), undefined,
      'one common pair of `near` still goes to the trigram index')
    const checks = () => ['check', 'typecheck', 'recheck']
    t.equal(matchOf('check to', undefined, checks, starts),
      '{far}: (("check_to") OR ("check_today") OR ("check_tool") OR ("check_toolbox") OR ("echeck_to") OR ' +
      '("echeck_today") OR ("echeck_tool") OR ("echeck_toolbox"))', 'one pair: each first form with each word')
    t.equal(matchOf('check in to', undefined, checks, starts),
      '{far}: (("check_in" + "in_to") OR ("check_in" + "in_today") OR ("check_in" + "in_tool") OR ' +
      '("check_in" + "in_toolbox") OR ("echeck_in" + "in_to") OR ("echeck_in" + "in_today") OR ' +
      '("echeck_in" + "in_tool") OR ("echeck_in" + "in_toolbox"))', 'several: the phrase per pair of forms')
    t.equal(matchOf('check in to ', undefined, checks, starts),
      '{far}: (("check_in" + "in_to") OR ("echeck_in" + "in_to"))', 'and per first form when the last is whole')
    const hundred: WordStarts = (run) => Array.from({ length: 100 }, (_, i) => `${run}${i}`)
    t.equal(matchOf('introduced by to', undefined, undefined, hundred),
      `{far}: (("oduced_by") AND (${['by_to', ...Array.from({ length: 100 }, (_, i) => `by_to${i}`)]
        .map((f) => `"${f}"`).join(' OR ')}))`,
      'more than 64 forms: ORed and ANDed with the pairs before (FTS5 would open the pair before once per form)')
    const many: WordStarts = () => Array.from({ length: MAX_LAST_FORMS / 2 }, (_, i) => `to${i}`)
    t.equal(matchOf('check in to', undefined, checks, many),
      `{far}: (("check_in" OR "echeck_in") AND (${Array.from({ length: MAX_LAST_FORMS / 2 + 1 },
        (_, i) => `("in_to${i === 0 ? '' : i - 1}")`).join(' OR ')}))`,
      `more than ${MAX_LAST_FORMS} pairs of forms: the first forms ANDed with the rest's phrases`)
    t.equal(matchOf('check to', undefined, checks, many), matchOf('check to', undefined, checks),
      `more than ${MAX_LAST_FORMS} forms with the first's: as without`)
    t.equal(matchOf('one two three four five six seven eight nine', undefined, undefined, starts),
      '{near}: (("ee_four" + "ur_five" + "ve_six" + "ix_seven" + "en_eight" + "ht_nine"))',
      'a long phrase: the window chosen as without, its last pair exact')
    t.equal(matchOf('extraordinarily complicated sentences appear here often ab cd to', undefined, undefined, starts),
      '{far}: ("narily_complicated" + "icated_sentences" + "tences_appear" + "appear_here" + "here_often" + ' +
      '"often_ab")', 'a window that leaves out the last pair: nothing asked of it')
    t.equal(matchOf('one two three four five six seven eight nine ', undefined, undefined, starts),
      matchOf('one two three four five six seven eight nine '), 'whole: as without')
    t.equal(matchOf('a b c d e f g h to', undefined, undefined, starts),
      '{far}: (("c_d" + "d_e" + "e_f" + "f_g" + "g_h" + "h_to") OR ("c_d" + "d_e" + "e_f" + "f_g" + "g_h" + ' +
      '"h_today") OR ("c_d" + "d_e" + "e_f" + "f_g" + "g_h" + "h_tool") OR ("c_d" + "d_e" + "e_f" + "f_g" + "g_h" + ' +
      '"h_toolbox"))', 'whose window ends with it: up to 8 forms, each the whole phrase (its rarest pair leads)')
    const twelve: WordStarts = (run) => Array.from({ length: 11 }, (_, i) => `${run}${'abcdefghijk'[i]}`)
    t.equal(matchOf('a b c d e f g h to', undefined, undefined, twelve),
      `{far}: (("c_d" + "d_e" + "e_f" + "f_g" + "g_h") AND (${['to', ...'abcdefghijk'].map((x, i) =>
        `("g_h" + "h_${i === 0 ? 'to' : `to${x}`}")`).join(' OR ')}))`,
      'more: the phrase of the rest once, ANDed (FTS5 would step it once per form), each form with the pair before')
  })

t.test('pairMatch with the vocabulary: a first run of one character asked as each end in `near` it may be the last of',
  async (t) => {
    const vocabulary = ['data', 'java', 'la', 'build', 'tool', 'tools', 'an', 'the']
    const nearEnds: NearEnds = (char) =>
      [...new Set(vocabulary.filter((w) => w.endsWith(char)).map((w) => w.slice(-2)))]
    const starts: WordStarts = (run) => vocabulary.filter((w) => w.startsWith(run))
    t.equal(matchOf('a build tool,', undefined, undefined, undefined, nearEnds),
      '({near}: ("a_build" OR "ta_build" OR "va_build" OR "la_build")) AND ' +
      `({far}: ("build_tool" + "tool|${p(',')}"))`,
      'itself (the word `a`, which the vocabulary has not) and each end of 2 characters, ORed; the rest in `far`, ' +
      'cut at `build` (5 characters), ANDed')
    t.equal(matchOf('a build tool,'), `{far}: ("build_tool" + "tool|${p(',')}")`, 'without: left out, `far`')
    t.equal(matchOf('a build', undefined, undefined, undefined, nearEnds), undefined,
      'one pair whose second word may go on, as prefixes: as without (each would be merged whole)')
    t.equal(matchOf('a build', undefined, undefined, starts, nearEnds),
      '{near}: (("a_build") OR ("ta_build") OR ("va_build") OR ("la_build"))',
      'with the words it begins: each pair of forms, exact')
    t.equal(matchOf('a tool', undefined, undefined, starts, nearEnds),
      '{near}: (("a_tool") OR ("a_tools") OR ("ta_tool") OR ("ta_tools") OR ("va_tool") OR ("va_tools") OR ' +
      '("la_tool") OR ("la_tools"))')
    t.equal(matchOf('a build', () => 1_000_000, undefined, undefined, nearEnds),
      matchOf('a build', () => 1_000_000, undefined, undefined, nearEnds), 'however dense: its ends are all matches')
    t.equal(matchOf('x build', undefined, undefined, starts, nearEnds), '{near}: (("x_build"))',
      'a character no word ends with: itself')
    t.equal(matchOf('a build', undefined, undefined, starts, () => undefined), undefined,
      'unknown (more than 128 ends): left out, as without')
    t.equal(matchOf(' a build', undefined, undefined, starts, nearEnds), '{far}: (("a_build"))',
      'a whole word of one character needs none')
  })

/**
 * The filter never loses a passage, and the check after is the index's own: for random texts and every kind of
 * substring of them (starting and ending inside words, across punctuation and Unicode spaces, in any case, with
 * characters JavaScript and SQLite fold differently), each passage the trigram index's phrase match finds is among
 * the pair index's matches, and a candidate's folded text holds the folded query exactly when the trigram index
 * finds it.
 */
t.test('every passage the trigram index finds is among the pair index\'s matches, and the check agrees with it',
  async (t) => {
    const db = new Database(':memory:')
    t.teardown(() => db.close())
    db.exec(`CREATE VIRTUAL TABLE pair_index USING fts5(near, far, head, content = '', contentless_delete = 1,
      tokenize = "ascii tokenchars '_|'");
      CREATE VIRTUAL TABLE trigrams USING fts5(text, tokenize = 'trigram case_sensitive 0')`)
    let seed = 7
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
    const words = ['of', 'the', 'a', 'leave', 'parental', 'weeks', 'E-mail', 'Zebra', 'x', 'état', 'ÉCOLE', 'naïve',
      'straße', '東京', '42', 'v2', 'ab', 'reallylongwordthatgoesonandonandonforever', 'Maſse', 'İl', 'Kılıç', 'ΟΔΟΣ',
      'οδος', 'µs', 'μs', 'ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝᲡ', 'საქართველოს', 'ᏣᎳᎩ', 'ꮳꮃꭹ', 'Ǆǅǆ', 'ﬁle', 'Kelvin', 'e\u0301te',
      // words of 2 UTF-16 units that begin longer ones (the vocabulary has only the longer)
      'to', 'Toolbox', 'St', '\u{1D400}', '\u{1D400}\u{1D400}',
      // punctuation as words (`case , the`), runs of it, a mark after it, a private-use character (as the tokens
      // write `,`), astral symbols and letters, controls
      ',', ',', '.', '(', ')', ':', '-', '--', '...', '_', '|', '"', "'", '\\', '—', '…', '«', '·', '(\u0301', '\ue02c',
      '\u{1F642}', '\u{1D400}b', '\u0001', '\u007f']
    const seps = [' ', ' ', ' ', ' ', ', ', '. ', '-', '  ', '\n', ' (', ') ', '\u00a0', '\u2009', '\u3000', '_', '|',
      '"', '*', '\t', '\u200b']
    const texts = Array.from({ length: 300 }, () => Array.from({ length: 4 + Math.floor(random() * 12) },
      () => pick(words)).map((w, i) => (i ? pick(seps) : '') + w).join(''))
    const insert = db.prepare('INSERT INTO pair_index (rowid, near, far, head) VALUES (?, @near, @far, @head)')
    const insertText = db.prepare('INSERT INTO trigrams (rowid, text) VALUES (?, ?)')
    texts.forEach((text, i) => { insert.run(i + 1, pairTokens(text)); insertText.run(i + 1, text) })
    const folded = texts.map(indexFold)
    const vocabulary = [...new Set(texts.flatMap((text) => passageTokens(text).runs))]
    let expanded = 0
    const endings: WordEnds = (run) => {
      const words = vocabulary.filter((w) => w.endsWith(run))
      if (words.length > 0) expanded++
      return words
    }
    // the vocabulary keeps the words of 2+ UTF-16 units (src/knowledge/word-vocabulary.ts)
    const kept = vocabulary.filter((w) => w.length >= 2)
    let started = 0
    const starts: WordStarts = (run) => {
      started++
      return kept.filter((w) => w.startsWith(run))
    }
    // and with words no passage holds (more than 64 forms: ORed, not each a phrase)
    const padded: WordStarts = (run) => [...starts(run)!, ...Array.from({ length: 70 }, (_, i) => `${run}ǫ${i}`)]
    let ended = 0
    const nearEnds: NearEnds = (char) => {
      ended++
      return [...new Set(kept.filter((w) => [...w].at(-1) === char).map((w) => [...w].slice(-2).join('')))]
    }
    const matches = db.prepare('SELECT rowid FROM pair_index WHERE pair_index MATCH ?').pluck()
    const trigramMatches = db.prepare('SELECT rowid FROM trigrams WHERE trigrams MATCH ?').pluck()
    let checked = 0
    let narrowed = 0
    let inHead = 0
    for (let n = 0; n < 3000; n++) {
      const source = pick(texts)
      const from = Math.floor(random() * source.length)
      const query = source.slice(from, from + 3 + Math.floor(random() * 70))
      const variant = random() < 0.3 ? query.toUpperCase() : random() < 0.5 ? query.toLowerCase() : query
      // a query is well-formed Unicode (the API refuses lone surrogates: src/http/json-guard.ts)
      if ([...variant].length < 3 || !variant.isWellFormed()) continue
      const holding = trigramMatches.all(ftsPhrase(variant)) as number[]
      const needle = indexFold(variant)
      const checks = folded.flatMap((text, i) => text.includes(needle) ? [i + 1] : [])
      if (checks.join() !== holding.join()) t.fail(`${JSON.stringify(variant)}: the check differs from the index`)
      // without counts, and with made-up counts (every token as dense or as rare as a coin says): prefixes left
      // out, pairs of `near` asked alone
      const counts = () => random() < 0.5 ? 10 : 1_000_000
      // and with the words of the texts: a first run that may end a longer word asked as each word's end
      // and a last run that may begin a longer word asked as each word it begins
      const forms = new Set([matchOf(variant), matchOf(variant, counts), matchOf(variant, counts),
        matchOf(variant, undefined, endings), matchOf(variant, counts, endings),
        matchOf(variant, undefined, undefined, starts), matchOf(variant, counts, endings, starts),
        matchOf(variant, undefined, undefined, undefined, nearEnds),
        matchOf(variant, counts, endings, starts, nearEnds), matchOf(variant, undefined, endings, padded, nearEnds)])
      if (!forms.has(undefined)) checked++
      for (const match of forms) {
        if (match === undefined) continue
        const got = new Set(matches.all(match) as number[])
        const lost = holding.filter((id) => !got.has(id))
        if (lost.length > 0) t.fail(`${JSON.stringify(variant)}: ${lost.length} passages lost`, { match })
        if (got.size < texts.length / 2) narrowed++
        if (match.includes('{head}')) inHead++
      }
    }
    t.ok(checked > 1000, `${checked} queries checked`)
    t.ok(expanded > 300, `${expanded} first runs asked as the ends of words`)
    t.ok(started > 300, `${started} last runs asked as the starts of words`)
    t.ok(ended > 100, `${ended} first runs of one character asked as the ends of words`)
    t.ok(narrowed > checked, `the pairs narrow most of them (${narrowed} of the forms)`)
    t.ok(inHead > 100, `${inHead} with a last character in \`head\``)
  })
