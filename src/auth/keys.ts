import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto'

export const API_KEY_PREFIX = 'cairn_'
const API_KEY_PATTERN = /^cairn_[A-Za-z0-9_-]{43}$/

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url')
  return { key, hash: sha256Hex(key), prefix: key.slice(0, 12) }
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value)
}

/** SHA-256 as hex; one-shot (no Hash object): it runs for every request made with an API key. */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex')
}

/** Constant-time equality of two secrets of any length (compares their digests). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}
