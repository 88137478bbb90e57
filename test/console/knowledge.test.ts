// The console's knowledge pages in a real browser: upload of several files (chosen and dropped), the document list
// following indexing live, a document's passages, search with highlighted snippets that stay text.
import t from 'tap'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { signup } from '../helper.js'
import { fitsWidth, harness, PHONE, type PageGlobals } from './harness.js'

/** The page's DataTransfer and File, typed here without the DOM library. */
type DropGlobals = {
  DataTransfer: new () => { items: { add(file: unknown): void } }
  File: new (parts: string[], name: string, options: { type: string }) => unknown
}

const h = await harness(t)
if (h) {
  const { app, base, open, signIn, shot } = h

  await t.test('several files uploaded, searched with highlighted snippets that never become HTML', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/knowledge')
    await signIn(page, u)
    await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor()
    await page.getByText('No documents yet.').waitFor()
    t.pass('the empty list says what to do next')

    const probe = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    await page.getByLabel('Files').setInputFiles([
      { name: 'handbook.md', mimeType: 'text/markdown',
        buffer: Buffer.from('# Handbook\n\nThe on-call rota changes every Monday at nine.\n') },
      { name: 'probe.txt', mimeType: 'text/plain',
        buffer: Buffer.from(`A hostile document: ${probe} says the rota is secret.\n`) },
      { name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('MZ not a document') }
    ])
    await page.getByRole('button', { name: 'Upload' }).click()
    await page.getByText('Uploaded: 1 passage').first().waitFor()
    const refused = page.locator('.upload-list li').filter({ hasText: 'tool.exe' })
    await refused.getByRole('alert').waitFor()
    t.match(await refused.getByRole('alert').textContent(), /exe|support/i, 'the refused file says why, beside it')
    t.equal(await page.getByText(/^Uploaded:/).count(), 2, 'the other two were uploaded')
    const list = page.locator('.doc-list')
    await list.getByRole('link', { name: 'handbook.md' }).waitFor()
    await list.getByRole('link', { name: 'probe.txt' }).waitFor()
    t.pass('the documents are listed at once')

    await page.getByLabel('Search knowledge').fill('rota')
    await page.getByLabel('Mode').selectOption('substring')
    await page.getByRole('button', { name: 'Search' }).click()
    const results = page.getByRole('region', { name: 'Search results' })
    await results.getByText('2 passages for “rota”').waitFor()
    t.equal(await results.locator('mark').filter({ hasText: /^rota$/ }).count(), 2, 'each match highlighted')
    t.ok(await results.getByText(probe, { exact: false }).count() > 0, 'the probe is shown as the text it is')
    t.equal(await page.locator('main img, main script:not([src])').count(), 0, 'no element was made of it')
    t.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).__xss), undefined, 'nothing ran')
    t.match(new URL(page.url()).search, /q=rota&mode=substring/, 'the search is in the address')
    await shot(page, 'knowledge-search')

    await results.getByRole('link', { name: 'handbook.md, passage 1' }).click()
    await page.getByRole('heading', { level: 1, name: 'handbook.md' }).waitFor()
    await page.locator('.passage.wanted').getByText('on-call rota changes every Monday').waitFor()
    t.pass('the result opens its document at the passage')
    await page.goBack()
    await results.getByText('2 passages for “rota”').waitFor()
    t.pass('back to the results')

    // words mode: the other selector value, the same field
    await page.getByLabel('Mode').selectOption('semantic')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('alert').filter({ hasText: /embedding/i }).waitFor()
    t.pass('a mode the server cannot serve says why, beside the search')
  })

  await t.test('files dropped on the upload area; a large document goes from processing to indexed live; the ' +
    'list filtered by tag, category and scope',
  async (t) => {
    const u = await signup(app)
    const page = await open(t, '/knowledge')
    await signIn(page, u)
    await page.getByText('No documents yet.').waitFor()
    const dropped = await page.evaluateHandle(() => {
      const g = globalThis as unknown as DropGlobals
      const dt = new g.DataTransfer()
      dt.items.add(new g.File(['Dropped notes about the release train.'], 'dropped-one.txt', { type: 'text/plain' }))
      dt.items.add(new g.File(['Second dropped file: the release checklist.'], 'dropped-two.md',
        { type: 'text/markdown' }))
      return dt
    })
    await page.locator('form.upload').dispatchEvent('drop', { dataTransfer: dropped })
    await page.locator('.upload-list li').filter({ hasText: 'dropped-two.md' }).waitFor()
    await page.getByLabel('Category', { exact: true }).fill('release')
    await page.getByLabel('Tags', { exact: true }).fill('train, checklist')
    await page.getByRole('button', { name: 'Upload' }).press('Enter')
    await page.locator('.doc-list').getByRole('link', { name: 'dropped-one.txt' }).waitFor()
    await page.locator('.doc-list').getByRole('link', { name: 'dropped-two.md' }).waitFor()
    t.pass('both dropped files uploaded with the keyboard')

    // over 1 MB of text is indexed after the upload's answer: the list shows it being indexed, then indexed
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const big = Array.from({ length: 12_000 }, (_, i) => `Line ${i} of the archive, about shipping crates.`)
      .join('\n')
    const uploaded = await person.uploadDocument({ data: big, fileName: 'archive.txt' })
    const row = page.locator('.doc-list li').filter({ hasText: 'archive.txt' })
    await row.waitFor()
    t.pass('a document uploaded elsewhere appears without a reload')
    await row.getByText('Indexed', { exact: true }).waitFor({ timeout: 60_000 })
    t.pass('its status follows the event stream to indexed')

    await row.getByRole('link', { name: 'archive.txt' }).click()
    await page.getByRole('heading', { level: 1, name: 'archive.txt' }).waitFor()
    const pages = page.getByRole('navigation', { name: 'Pages of passages' })
    await pages.getByText(/^Page 1 of \d+/).waitFor()
    await pages.getByRole('button', { name: 'Next page' }).click()
    await pages.getByText(/^Page 2 of/).waitFor()
    t.equal(await page.locator('.passage').first().getAttribute('id'), 'passage-21', 'the second page of passages')
    await shot(page, 'knowledge-document')
    t.ok(uploaded.document.chunkCount > 20)

    // the list filtered by tag and category (the upload's), and by who it is shared with
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Knowledge' }).click()
    const list = page.locator('.doc-list')
    await list.getByRole('link', { name: 'archive.txt' }).waitFor()
    await page.getByLabel('With tag').fill('train')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await list.getByRole('link', { name: 'archive.txt' }).waitFor({ state: 'detached' })
    t.equal(await list.getByRole('link').count(), 2, 'the two files uploaded with the tag')
    t.match(await list.locator('li').first().textContent(), /release · train, checklist/, 'with category and tags')
    await page.getByLabel('With tag').fill('')
    await page.getByLabel('With category').fill('release')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.getByLabel('Show').selectOption('personal')
    await page.getByText('No document matches these filters.').waitFor()
    t.match(new URL(page.url()).search, /category=release/, 'the filters are in the address')
  })

  await t.test('a phone-sized window, and another organization\'s document is not found', async (t) => {
    const u = await signup(app)
    const other = await signup(app)
    const theirs = await new CairnClient({ baseUrl: base, token: other.token, workspaceId: other.workspaceId })
      .uploadDocument({ data: 'Their secret plans.', fileName: 'theirs.txt' })
    const page = await open(t, '/knowledge', PHONE)
    await signIn(page, u)
    await page.getByText('No documents yet.').waitFor()
    t.ok(await fitsWidth(page), 'nothing wider than a 390-pixel screen')
    await shot(page, 'knowledge-phone')
    await page.goto(`${base}/knowledge/documents/${theirs.document.id}`)
    await page.getByRole('heading', { level: 1, name: 'Document not found' }).waitFor()
    t.equal(await page.getByText('Their secret plans.').count(), 0, 'nothing of it is shown')
    await page.goto(`${base}/knowledge?q=secret+plans`)
    await page.getByText('Nothing found for “secret plans”.', { exact: false }).waitFor()
    t.pass('nor found by search')
  })
}
