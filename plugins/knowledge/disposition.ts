/**
 * `Content-Disposition: attachment` with the original name: an ASCII fallback (quotes, backslashes,
 * control and non-ASCII characters replaced) plus the exact name as RFC 5987 `filename*`. No header
 * injection is possible: CR and LF never reach the header.
 */
export function contentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_') || 'download'
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
