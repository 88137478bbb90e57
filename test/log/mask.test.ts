import t from 'tap'
import { configSecrets, describeError, maskSecrets } from '../../src/log/mask.js'
import { loadConfig } from '../../src/config.js'

t.test('secret-shaped parts of a message are masked, ids and addresses stay readable', async (t) => {
  const cases: Array<[string, string]> = [
    ['GET https://alice:hunter22@example.org/x failed', 'GET https://[redacted]@example.org/x failed'],
    ['smtps://mailer:p%40ss@smtp.example.org:465 refused', 'smtps://[redacted]@smtp.example.org:465 refused'],
    ['POST https://h.example/hook?api_key=abc123&x=1',
      'POST https://h.example/hook?api_key=[redacted]&x=1'],
    ['https://h.example/cb?access_token=zzz#sig=qq',
      'https://h.example/cb?access_token=[redacted]#sig=[redacted]'],
    ['sent Authorization: Bearer eyJhbGciOi.abc.def', 'sent Authorization: [redacted] [redacted]'],
    ['request had Bearer abcdefgh123', 'request had Bearer [redacted]'],
    ['{"password":"s3cret","name":"Ann"}', '{"password":"[redacted]","name":"Ann"}'],
    ['CAIRN_LLM_API_KEY=sk-abcdefghijklmnop is wrong', 'CAIRN_LLM_API_KEY=[redacted] is wrong'],
    ['key cairn_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg refused', 'key cairn_[redacted] refused'],
    ['secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'secret whsec_[redacted]'],
    ['https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXxxxxXXXXxxxx1234XXXX',
      'https://hooks.slack.com/services/T0000AAAA/B0000BBBB/[redacted]'],
    ...(() => {
      const ids = 'document 0f8b4c1e-9a7d-4c55-8f0e-2b9d7c6a5e41 ' +
        '(sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08)'
      return [[ids, ids] as [string, string]]
    })(),
    ['connect ECONNREFUSED 127.0.0.1:11434', 'connect ECONNREFUSED 127.0.0.1:11434'],
    ['The model answered 404 for max_tokens: 5', 'The model answered 404 for max_tokens: 5']
  ]
  for (const [input, expected] of cases) t.equal(maskSecrets(input), expected, input)
})

t.test('configured secret values are masked wherever they appear, the longest first', async (t) => {
  t.equal(maskSecrets('the server said: unknown key plainkeyvalue (plainkeyvalue2)',
    ['plainkeyvalue', 'plainkeyvalue2']),
  'the server said: unknown key [redacted] ([redacted])')
  t.equal(maskSecrets('short abc stays', ['abc']), 'short abc stays', 'values too short to be secrets are left')
  const config = loadConfig({ CAIRN_LLM_BASE_URL: 'http://127.0.0.1:1/v1', CAIRN_LLM_MODEL: 'm',
    CAIRN_LLM_API_KEY: 'llm-key-value', CAIRN_EMBED_API_KEY: 'embed-key-value', CAIRN_STT_API_KEY: 'stt-key-value',
    CAIRN_SERVICE_KEY: 'service-key-value-0123', CAIRN_SMTP_URL: 'smtp://mailer:mail%2Fpass@127.0.0.1:25' })
  t.same(configSecrets(config).sort(), ['embed-key-value', 'llm-key-value', 'mail%2Fpass', 'mail/pass',
    'service-key-value-0123', 'stt-key-value'])
})

t.test('an error is described by its chain of causes and the first code along it', async (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })
  const fetchFailed = new TypeError('fetch failed', { cause: refused })
  t.same(describeError(fetchFailed),
    { message: 'fetch failed: connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' })
  class ModelError extends Error { override name = 'ModelError' }
  t.same(describeError(new ModelError('The model server answered 401 for key sk-abcdefghijklmnopqrst')),
    { message: 'The model server answered 401 for key sk-[redacted]', code: 'ModelError' })
  t.same(describeError('a string thrown'), { message: 'a string thrown' })
  t.same(describeError(new Error('x'.repeat(5000))).message.length, 1001, 'long messages are cut')
  const repeated = new Error('disk I/O error', { cause: new Error('disk I/O error') })
  t.equal(describeError(repeated).message, 'disk I/O error', 'a cause that repeats the message is not said twice')
})
