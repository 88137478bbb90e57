import { scrypt, randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const PRODUCTION = { N: 16384, r: 8, p: 1, keylen: 64 }
let params = PRODUCTION

function derive(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)))
  )
}

/**
 * Test processes only (test/helper.ts): new hashes at scrypt's lowest useful cost, since a suite run makes a few
 * hundred of them at ~57 ms each. Refused outside a tap test process (tap sets TAP=1 in each), so no
 * configuration or environment of a server can lower the production cost; verification reads the cost from the
 * stored hash either way.
 */
export function lowerPasswordCostForTests(): void {
  if (process.env.TAP !== '1') throw new Error('lowerPasswordCostForTests() is for tap test processes only')
  params = { N: 16, r: 1, p: 1, keylen: 64 }
}

/** `scrypt$N$r$p$salt$hash` (base64url parts): parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keylen } = params
  const salt = randomBytes(16)
  const key = await derive(password, salt, keylen, { N, r, p })
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, hashText] = stored.split('$')
  if (scheme !== 'scrypt' || !saltText || !hashText) return false
  const expected = Buffer.from(hashText, 'base64url')
  const key = await derive(password, Buffer.from(saltText, 'base64url'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: 64 * 1024 * 1024
  })
  return key.length === expected.length && timingSafeEqual(key, expected)
}

let dummy: Promise<string> | undefined
/** A hash to verify against when the email is unknown, so both login failures take the same time. */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'))
  return dummy
}
