/**
 * A valid PDF of `pages` pages with a correct cross-reference table: every page empty, except that
 * `text` (if given) is written on the first one. Small on disk however many pages it has.
 */
export function manyPagePdf(pages: number, text?: string): Buffer {
  const objects: string[] = []
  // 1 catalog, 2 page tree, 3 font, 4 content of page one, 5 empty content, 6.. pages
  const kids = Array.from({ length: pages }, (_, i) => `${6 + i} 0 R`).join(' ')
  objects.push('<< /Type /Catalog /Pages 2 0 R >>')
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`)
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')
  const first = text ? `BT /F1 12 Tf 72 720 Td (${text.replace(/[()\\]/g, (c) => '\\' + c)}) Tj ET` : ''
  objects.push(`<< /Length ${first.length} >>\nstream\n${first}\nendstream`)
  objects.push('<< /Length 0 >>\nstream\n\nendstream')
  for (let i = 0; i < pages; i++) {
    objects.push('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> ' +
      `/Contents ${i === 0 ? 4 : 5} 0 R >>`)
  }
  // every character is ASCII: offsets are string lengths
  const parts = ['%PDF-1.4\n']
  let size = parts[0].length
  const offsets: number[] = []
  objects.forEach((o, i) => {
    offsets.push(size)
    const part = `${i + 1} 0 obj\n${o}\nendobj\n`
    parts.push(part)
    size += part.length
  })
  let body = parts.join('')
  const xref = size
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(body, 'latin1')
}
