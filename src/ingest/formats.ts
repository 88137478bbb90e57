/** The knowledge file types (docs/api/knowledge.md#uploading): extension → how its text is read. */
export type ExtractorKind = 'pdf' | 'docx' | 'html' | 'text'

const TEXT_EXTENSIONS = [
  'txt', 'md', 'markdown', 'json', 'yaml', 'yml', 'xml', 'csv', 'tsv', 'log', 'rst', 'toml', 'ini',
  'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'py', 'rb', 'go', 'rs', 'java', 'kt', 'c', 'h', 'cpp', 'hpp', 'cs',
  'php', 'swift', 'sh', 'sql', 'css'
]

const KINDS: Record<string, ExtractorKind> = {
  pdf: 'pdf',
  docx: 'docx',
  html: 'html',
  htm: 'html',
  ...Object.fromEntries(TEXT_EXTENSIONS.map((e) => [e, 'text' as const]))
}

/** With the dot, as the health and 415 responses list them. */
export const SUPPORTED_FORMATS: readonly string[] = Object.keys(KINDS).map((e) => `.${e}`)

/** The lower-case extension without the dot, or '' when the name has none. */
export function fileTypeOf(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? ''
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ''
}

export function extractorFor(fileType: string): ExtractorKind | undefined {
  return Object.hasOwn(KINDS, fileType) ? KINDS[fileType] : undefined
}
