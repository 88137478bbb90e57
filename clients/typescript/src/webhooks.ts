/**
 * Verification of Cairn's webhook deliveries (docs/api/webhooks.md#verifying-a-delivery), with WebCrypto (Node ≥ 20,
 * Deno, Bun, browsers):
 * - `X-Cairn-Signature`: lower-case hex HMAC-SHA256 of the raw body, keyed with the whole secret string;
 * - Standard Webhooks: `webhook-signature` = space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 *   keyed with the base64-decoded part of the secret after `whsec_`; the timestamp must be recent.
 * Compare the raw body as received: a re-serialised JSON body no longer matches.
 */

type Body = string | Uint8Array
export type HeaderSource = Headers | Record<string, string | string[] | undefined>

const encoder = new TextEncoder()
const bytes = (body: Body) => (typeof body === 'string' ? encoder.encode(body) : body)

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : value
}

function hexBytes(hex: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

function base64Bytes(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text)
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  } catch {
    return undefined
  }
}

async function hmacKey(secret: Uint8Array) {
  return crypto.subtle.importKey('raw', secret as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false,
    ['verify'])
}

/** Constant-time check of a MAC (WebCrypto's verify). */
const macMatches = (key: Awaited<ReturnType<typeof hmacKey>>, mac: Uint8Array, data: Uint8Array) =>
  crypto.subtle.verify('HMAC', key, mac as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>)

/** `X-Cairn-Signature`: hex HMAC-SHA256 of the raw body keyed with the UTF-8 bytes of the whole secret. */
export async function verifyCairnSignature(body: Body, signature: string | undefined,
  secret: string): Promise<boolean> {
  const mac = signature ? hexBytes(signature.trim()) : undefined
  if (!mac) return false
  return macMatches(await hmacKey(encoder.encode(secret)), mac, bytes(body))
}

export interface StandardWebhookOptions {
  /** accepted distance between `webhook-timestamp` and now, in seconds (default 300) */
  toleranceSeconds?: number
  /** now, in Unix seconds (tests) */
  now?: number
}

/** Standard Webhooks v1 signatures; any one matching signature of the space-separated list is enough. */
export async function verifyStandardWebhook(body: Body, headers: HeaderSource, secret: string,
  options: StandardWebhookOptions = {}): Promise<boolean> {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false
  const keyBytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice(6) : secret)
  if (!keyBytes) return false
  const key = await hmacKey(keyBytes)
  const payload = bytes(body)
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + payload.length)
  signed.set(prefix)
  signed.set(payload, prefix.length)
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2)
    const mac = version === 'v1' && value ? base64Bytes(value) : undefined
    if (mac && await macMatches(key, mac, signed)) return true
  }
  return false
}

/**
 * Either scheme: the Standard Webhooks signature when the delivery carries one (it is timestamped and lists
 * the old secret's signature too during a rotation), else `X-Cairn-Signature`.
 */
export async function verifyWebhook(body: Body, headers: HeaderSource, secret: string,
  options: StandardWebhookOptions = {}): Promise<boolean> {
  if (header(headers, 'webhook-signature')) return verifyStandardWebhook(body, headers, secret, options)
  return verifyCairnSignature(body, header(headers, 'x-cairn-signature'), secret)
}
