import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import type Database from 'better-sqlite3'
import type { Config } from '../config.js'
import { describeError } from '../log/mask.js'
import type { ServiceReport } from './probes.js'
import type { MissingStoredFiles } from './stored-files.js'

/** The one entry a start writes once it listens: what it uses, each with "answers" or why not. */
export interface StartupSummary {
  level: 'info' | 'warn'
  message: string
  fields: { url: string; dataDir: string; database: string; languageModel: string; embedder: string; speech: string;
    storedFiles: string }
}

const NAMES: Record<keyof ServiceReport, string> = {
  languageModel: 'the language model', embedder: 'the embedder', speech: 'the speech engine'
}

function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GB`
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MB`
  return `${Math.round(n / 1024)} KB`
}

function freeSpace(dir: string): string {
  try {
    const s = fs.statfsSync(dir)
    return `, ${bytes(s.bavail * s.bsize)} free`
  } catch {
    return ''
  }
}

function database(sqlite: Database.Database): { ok: boolean; text: string } {
  const file = sqlite.name
  try {
    const version = sqlite.prepare('SELECT sqlite_version() AS v').get() as { v: string }
    const size = fs.statSync(file).size
    return { ok: true, text: `SQLite ${version.v} at ${file} (${bytes(size)}): answers` }
  } catch (err) {
    return { ok: false, text: `SQLite at ${file}: does not answer (${describeError(err).message})` }
  }
}

function storedFiles(missing: MissingStoredFiles | undefined): { ok: boolean; text: string } {
  if (!missing) return { ok: true, text: 'still being checked (a warning follows if any is missing)' }
  if (missing.documents === 0 && missing.audio === 0) return { ok: true, text: 'every stored file is present' }
  return { ok: false, text: `${missing.documents} document(s) and ${missing.audio} audio file(s) lack their files ` +
    '(see the warning above)' }
}

/**
 * The summary of a start: the public URL and the address listened on, the data directory, the database, and the
 * outside services as probed. Never a secret: base URLs carry none (config.ts refuses credentials in them) and
 * API keys are not named.
 */
export function startupSummary(config: Config, sqlite: Database.Database, address: AddressInfo | string | null,
  services: ServiceReport, missing?: MissingStoredFiles): StartupSummary {
  const listening = address && typeof address === 'object'
    ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
    : String(address ?? 'unknown')
  const publicUrl = config.publicUrl === `http://${config.host}:${config.port}` && typeof address === 'object' &&
    address !== null && config.port === 0 ? `http://${listening}` : config.publicUrl
  const db = database(sqlite)
  const files = storedFiles(missing)
  const failing = (Object.keys(NAMES) as Array<keyof ServiceReport>).filter((k) => services[k].state === 'fails')
    .map((k) => NAMES[k])
  if (!db.ok) failing.unshift('the database')
  if (!files.ok) failing.push('stored files')
  const message = `Cairn is ready at ${publicUrl}` +
    (failing.length ? `; needs attention: ${failing.join(', ')}` : '')
  return {
    level: failing.length ? 'warn' : 'info',
    message,
    fields: {
      url: publicUrl === `http://${listening}` ? publicUrl : `${publicUrl} (listening on ${listening})`,
      dataDir: `${config.dataDir}${freeSpace(config.dataDir)}`,
      database: db.text,
      languageModel: services.languageModel.text,
      embedder: services.embedder.text,
      speech: services.speech.text,
      storedFiles: files.text
    }
  }
}
