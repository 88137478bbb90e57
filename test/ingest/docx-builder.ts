import { makeZip } from '../zip-helper.js'

/**
 * Builds real .docx files (WordprocessingML in a zip, with a style sheet naming the styles as Word and
 * LibreOffice do), for tests of what the extractor keeps of their structure.
 */

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** A paragraph, with a style id from the style sheet below ('Heading1', 'Title', 'PreformattedText', ...). */
export function para(text: string, style?: string): string {
  const props = style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''
  const runs = text.split('\t').map((part) => `<w:r><w:t xml:space="preserve">${esc(part)}</w:t></w:r>`)
    .join('<w:r><w:tab/></w:r>')
  return `<w:p>${props}${runs}</w:p>`
}

/** A bulleted list item (numbering 1 in the numbering part). */
export function bullet(text: string): string {
  return `<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>` +
    `</w:pPr><w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p>`
}

/** A table; a cell is its paragraphs' text, or the XML of what it holds (a nested table) when it starts with '<'. */
export function table(rows: string[][]): string {
  const cell = (c: string) => `<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/></w:tcPr>${
    c.startsWith('<') ? c + para('') : c.split('\n').map((line) => para(line)).join('')}</w:tc>`
  return `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr>` +
    rows.map((r) => `<w:tr>${r.map(cell).join('')}</w:tr>`).join('') + '</w:tbl>'
}

/** A picture (the image part rId9, which docx() adds as a PNG the extractor never needs to read). */
export function picture(description: string): string {
  return '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">' +
    `<wp:docPr id="1" name="Picture 1" descr="${esc(description)}"/>` +
    '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">' +
    '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
    '<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:blipFill>' +
    '<a:blip xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:embed="rId9"/>' +
    '</pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>'
}

const STYLES = [['Title', 'Title'], ['Heading1', 'heading 1'], ['Heading2', 'heading 2'], ['Heading3', 'heading 3'],
  ['PreformattedText', 'Preformatted Text'], ['ListParagraph', 'List Paragraph']]

const CONTENT_TYPES = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
  '<Override PartName="/word/document.xml" ' +
  'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
  '<Override PartName="/word/styles.xml" ' +
  'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
  '<Override PartName="/word/numbering.xml" ' +
  'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>'
const ROOT_RELS = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" ' +
  'Target="word/document.xml"/></Relationships>'
const DOCUMENT_RELS = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" ' +
  'Target="styles.xml"/>' +
  '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" ' +
  'Target="numbering.xml"/>' +
  '<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" ' +
  'Target="media/image1.png"/></Relationships>'
const STYLES_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="${W}">` +
  '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>' +
  STYLES.map(([id, name]) => `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/>` +
    '<w:basedOn w:val="Normal"/></w:style>').join('') +
  '<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/></w:style></w:styles>'
const NUMBERING_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:numbering xmlns:w="${W}">` +
  '<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/>' +
  '<w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>'

/** A .docx whose body is the given paragraphs and tables (XML from para, bullet and table). */
export function docx(body: string[]): Buffer {
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>` +
    body.join('') + '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body></w:document>'
  return makeZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(ROOT_RELS) },
    { name: 'word/_rels/document.xml.rels', data: Buffer.from(DOCUMENT_RELS) },
    { name: 'word/document.xml', data: Buffer.from(document) },
    { name: 'word/styles.xml', data: Buffer.from(STYLES_XML) },
    { name: 'word/numbering.xml', data: Buffer.from(NUMBERING_XML) },
    // the extractor hands mammoth the text parts only: a conversion that read the picture would fail
    { name: 'word/media/image1.png', data: Buffer.alloc(4096, 0x89) }
  ])
}
