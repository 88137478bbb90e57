// The Workflows pages in Chromium: a run started from its inputs form, followed to its finished status through the
// workspace event stream, with the artifact it wrote; a foreign workflow is not found.
import t from 'tap'
import { harness, fitsWidth, PHONE } from './harness.js'
import { signup } from '../helper.js'

const h = await harness(t)
if (h) await main(h)

async function main(h: NonNullable<Awaited<ReturnType<typeof harness>>>) {
  const { app, open, signIn, shot } = h

  await t.test('a run from its inputs form to its finished status, and the artifact it wrote', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/workflows')
    let streamed = false
    page.on('request', (r) => { if (r.url().includes('/api/v2/events/stream')) streamed = true })
    await signIn(page, u)
    await page.getByText('No workflows in General yet').waitFor()

    const made = await app.inject({ method: 'POST', url: '/api/v2/workflows',
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId },
      payload: { name: 'Weekly notes', description: 'Writes the notes of a topic for review.',
        inputs: [{ name: 'topic', required: true }, { name: 'audience', default: 'the team' }],
        steps: [{ id: 'find', type: 'search_knowledge', query: '{{inputs.topic}}' },
          { id: 'write', type: 'create_artifact', artifactType: 'research_summary',
            title: 'Notes on {{inputs.topic}} for {{inputs.audience}}',
            content: { summary: 'Found nothing yet.' } }] } })
    t.equal(made.statusCode, 201, 'a workflow defined through the API')
    await page.reload()
    await page.getByRole('link', { name: 'Weekly notes' }).click()
    await page.getByRole('heading', { level: 1, name: 'Weekly notes' }).waitFor()
    await page.getByText('Not run yet').waitFor()
    t.equal(await page.getByLabel('audience').inputValue(), 'the team', 'the default is filled in')
    await page.getByRole('button', { name: 'Run workflow' }).click()
    t.ok(await page.getByLabel('topic (required)').evaluate((el) =>
      !(el as unknown as { validity: { valid: boolean } }).validity.valid), 'a required input is asked for first')

    // keyboard only: the field, then Enter
    await page.getByLabel('topic (required)').focus()
    await page.keyboard.type('caching')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: /^Run of / }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Status: Completed' }).waitFor({ timeout: 30_000 })
    const artifact = page.getByRole('link', { name: 'Notes on caching for the team' })
    await artifact.waitFor()
    t.ok(streamed, 'the run page follows the workspace event stream')
    t.ok(await page.getByText('Search knowledge').isVisible(), 'its steps')
    await shot(page, 'workflow-run')

    await page.getByRole('link', { name: 'the workflow' }).click()
    const runs = page.getByRole('table', { name: 'Runs' })
    await runs.getByText('Completed').waitFor()
    t.equal(await runs.locator('tbody tr').count(), 1, 'the run is listed')
    await page.goBack()
    await page.getByRole('link', { name: 'Notes on caching for the team' }).click()
    await page.getByRole('heading', { level: 1, name: 'Notes on caching for the team' }).waitFor()
    t.pass('the artifact opens')
  })

  await t.test('another organization\'s workflow is not found; the list fits a phone', async (t) => {
    const owner = await signup(app)
    const made = await app.inject({ method: 'POST', url: '/api/v2/workflows',
      headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId },
      payload: { name: 'Private flow', steps: [{ id: 'a', type: 'search_knowledge', query: 'x' }] } })
    const id = made.json().workflow.id as string
    const stranger = await signup(app)
    const page = await open(t, `/workflows/${id}`, PHONE)
    await signIn(page, stranger)
    await page.getByRole('heading', { level: 1, name: 'Workflow not found' }).waitFor()
    t.equal(await page.getByText('Private flow').count(), 0, 'nothing of it is shown')
    await page.getByRole('link', { name: 'See the workflows' }).click()
    await page.getByText('No workflows in General yet').waitFor()
    t.ok(await fitsWidth(page), 'fits a phone')
  })
}
