/**
 * Builds real PDFs with text placed where a layout puts it (two columns, a table's cells, headings in a larger
 * size), in the order given: as word processors and typesetters write their content streams.
 */
export interface PlacedText { x: number; y: number; size: number; text: string }

const escape = (s: string) => s.replace(/[()\\]/g, (c) => '\\' + c)

export function layoutPdf(pages: PlacedText[][]): Buffer {
  const objects: string[] = []
  // 1 catalog, 2 page tree, 3 font, then a content stream and a page for each page
  const kids = pages.map((_, i) => `${5 + 2 * i} 0 R`).join(' ')
  objects.push('<< /Type /Catalog /Pages 2 0 R >>')
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`)
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>')
  for (const page of pages) {
    const content = page.map((t) => `BT /F1 ${t.size} Tf ${t.x} ${t.y} Td (${escape(t.text)}) Tj ET`).join('\n')
    objects.push(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`)
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> ` +
      `/Contents ${objects.length} 0 R >>`)
  }
  const parts = ['%PDF-1.4\n']
  let size = parts[0].length
  const offsets: number[] = []
  objects.forEach((o, i) => {
    offsets.push(size)
    const part = `${i + 1} 0 obj\n${o}\nendobj\n`
    parts.push(part)
    size += Buffer.byteLength(part, 'latin1')
  })
  let body = parts.join('')
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`
  return Buffer.from(body, 'latin1')
}
