import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

const SEALED = 'enc1:'

/** A signing secret that cannot be read: the data dir's `webhook-key` is not the one it was sealed with. */
export class UnreadableSecretError extends Error {
  override name = 'UnreadableSecretError'
}

/**
 * Webhook signing secrets at rest: AES-256-GCM under a key kept in the data dir (`webhook-key`, 0600), bound to
 * the webhook's id, so a copy of cairn.db alone (a backup, a dump) does not hold them. Standard Webhooks signs
 * with the secret itself: unlike API keys, it cannot be stored hashed. A value without the prefix was written
 * before sealing and is read as it is (the events plugin seals such rows at start).
 */
export function secretBox(keyText: string) {
  const key = createHash('sha256').update('cairn webhook secrets\0').update(keyText).digest()
  return {
    seal(secret: string, webhookId: string): string {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(webhookId))
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
      return SEALED + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
    },
    open(stored: string, webhookId: string): string {
      if (!stored.startsWith(SEALED)) return stored
      const raw = Buffer.from(stored.slice(SEALED.length), 'base64url')
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(Buffer.from(webhookId))
        decipher.setAuthTag(raw.subarray(12, 28))
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
      } catch {
        throw new UnreadableSecretError(`the signing secret of webhook ${webhookId} cannot be read with this data ` +
          'dir\'s webhook-key (restored without it, or replaced): rotate the webhook\'s secret')
      }
    },
    sealed: (stored: string) => stored.startsWith(SEALED)
  }
}

export type SecretBox = ReturnType<typeof secretBox>
