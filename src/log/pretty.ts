/**
 * The log for people at a terminal: each pino JSON line as `12:04:05 WARN  message`, then its fields indented, one
 * per line (`key: value`, nested objects as `key.sub: value`). Lines that are not JSON pass through unchanged.
 */

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '\x1b[90m' },
  20: { name: 'DEBUG', color: '\x1b[36m' },
  30: { name: 'INFO', color: '\x1b[32m' },
  40: { name: 'WARN', color: '\x1b[33m' },
  50: { name: 'ERROR', color: '\x1b[31m' },
  60: { name: 'FATAL', color: '\x1b[41m\x1b[37m' }
}
const RESET = '\x1b[0m'
const DIM = '\x1b[2m'
const BOLD = '\x1b[1m'

/** fields every line has, or that the head of the line already shows */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v'])

export interface PrettyOptions {
  /** ANSI colours (a terminal that shows them) */
  colors?: boolean
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

function clock(time: unknown): string {
  const d = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date()
  if (Number.isNaN(d.getTime())) return '--:--:--'
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g

/**
 * Text from outside (an error message, a receiver's answer) shown without its control characters: a newline or an
 * escape sequence could forge a log line or rewrite the terminal; each becomes a visible \u escape.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return printable(value)
  if (value === null || typeof value !== 'object') return String(value)
  return printable(JSON.stringify(value))
}

/** `key: value` lines of an object, nested keys joined with dots; a stack keeps its own lines */
function fields(obj: Record<string, unknown>, prefix: string, out: string[]): void {
  for (const [key, value] of Object.entries(obj)) {
    const name = printable(prefix + key)
    if (key === 'stack' && typeof value === 'string') {
      out.push(`${name}:`, ...value.split('\n').map((l) => `  ${printable(l)}`))
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value) &&
      Object.keys(value).length > 0) {
      fields(value as Record<string, unknown>, `${name}.`, out)
    } else {
      out.push(`${name}: ${scalar(value)}`)
    }
  }
}

/** One pino JSON line made readable (with its trailing newline), or the line as it came. */
export function prettyLine(line: string, options: PrettyOptions = {}): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return line.endsWith('\n') ? line : `${line}\n`
  }
  const c = options.colors ?? false
  const level = LEVELS[entry.level as number] ?? { name: String(entry.level ?? 'LOG').toUpperCase(), color: '' }
  const head = `${c ? DIM : ''}${clock(entry.time)}${c ? RESET : ''} ` +
    `${c ? level.color : ''}${level.name.padEnd(5)}${c ? RESET : ''} ` +
    `${c ? BOLD : ''}${typeof entry.msg === 'string' ? printable(entry.msg) : ''}${c ? RESET : ''}`
  const rest: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entry)) if (!HIDDEN.has(key) && value !== undefined) rest[key] = value
  const lines: string[] = []
  fields(rest, '', lines)
  const indent = c ? `    ${DIM}` : '    '
  return [head, ...lines.map((l) => `${indent}${l}${c ? RESET : ''}`)].join('\n') + '\n'
}

/** A destination for pino that writes each line made readable to `out` (pino writes whole lines, one per call). */
export function prettyStream(out: { write(chunk: string): unknown }, options: PrettyOptions = {}) {
  return {
    write(line: string) {
      out.write(prettyLine(line, options))
    }
  }
}

/** CAIRN_LOG_FORMAT as used: `auto` is pretty when standard output is a terminal, else JSON (files, collectors). */
export function logFormat(setting: 'auto' | 'json' | 'pretty', isTerminal: boolean): 'json' | 'pretty' {
  return setting === 'auto' ? (isTerminal ? 'pretty' : 'json') : setting
}
