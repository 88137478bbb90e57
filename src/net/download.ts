import http from 'node:http'
import https from 'node:https'
import fs from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { Transform } from 'node:stream'
import { checkPublicUrl, guardedLookup, UrlNotAllowedError } from './address-guard.js'

/**
 * Downloads a public http(s) URL to a file with the address guard (checked before and at connect time),
 * a size cap and a time limit for the whole transfer. Redirects are not followed.
 */
export async function downloadTo(rawUrl: string, file: string,
  opts: { allowPrivate: boolean; allow?: readonly string[];
    maxBytes: number; timeoutMs: number; signal?: AbortSignal }) {
  const url = await checkPublicUrl(rawUrl, { allowPrivate: opts.allowPrivate, allow: opts.allow })
  const client = url.protocol === 'https:' ? https : http
  const signal = AbortSignal.any([AbortSignal.timeout(opts.timeoutMs), ...(opts.signal ? [opts.signal] : [])])
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = client.get(url, { lookup: guardedLookup(opts.allowPrivate, opts.allow), signal }, resolve)
    req.on('error', reject)
  })
  if (res.statusCode !== 200) {
    res.resume()
    throw new UrlNotAllowedError(`Fetching the audio answered ${res.statusCode}${
      res.statusCode && res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : ''}`)
  }
  let size = 0
  const cap = new Transform({
    transform(chunk: Buffer, _e, cb) {
      size += chunk.length
      cb(size > opts.maxBytes
        ? new UrlNotAllowedError(`The audio is larger than ${Math.round(opts.maxBytes / 1048576)} MB`) : null, chunk)
    }
  })
  await pipeline(res, cap, fs.createWriteStream(file), { signal })
  return size
}
