import Fastify from 'fastify'
import multipart from '@fastify/multipart'
import type { Test } from 'tap'

export interface SttCall { model?: string; responseFormat?: string; fileName?: string; mimeType?: string; bytes: number;
  auth?: string }

/** An OpenAI-compatible /v1/audio/transcriptions server on 127.0.0.1 that parses real multipart. */
export async function fakeStt(t: Test, opts: { hang?: boolean; fail?: boolean } = {}) {
  const calls: SttCall[] = []
  const app = Fastify()
  await app.register(multipart)
  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const call: SttCall = { bytes: 0, auth: request.headers.authorization }
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        call.fileName = part.filename
        call.mimeType = part.mimetype
        call.bytes = (await part.toBuffer()).length
      } else if (part.fieldname === 'model') call.model = String(part.value)
      else if (part.fieldname === 'response_format') call.responseFormat = String(part.value)
    }
    calls.push(call)
    if (opts.hang) await new Promise(() => {})
    if (opts.fail) return reply.code(500).send({ error: { message: 'model not loaded' } })
    return {
      task: 'transcribe', language: 'english', duration: 4.2,
      text: ' Remember to water the ferns on Tuesday.',
      segments: [
        { id: 0, seek: 0, start: 0.0, end: 2.1, text: ' Remember to water the ferns', tokens: [], temperature: 0,
          avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 },
        { id: 1, seek: 0, start: 2.1, end: 4.2, text: ' on Tuesday.', tokens: [], temperature: 0, avg_logprob: -0.2,
          compression_ratio: 1, no_speech_prob: 0 }
      ]
    }
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  return { baseUrl: `${address}/v1`, calls }
}
