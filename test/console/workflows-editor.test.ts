// The workflow editor in Chromium: a workflow created from the form (its inputs and steps), problems found in the
// browser and by the API each shown beside its field, then edited and run; a foreign workflow is not found.
import t from 'tap'
import { harness, fitsWidth, PHONE } from './harness.js'
import { signup, addUser } from '../helper.js'

const h = await harness(t)
if (h) await main(h)

async function main(h: NonNullable<Awaited<ReturnType<typeof harness>>>) {
  const { app, open, signIn, shot } = h

  await t.test('created from the form with problems shown beside their fields, then edited and run', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/workflows')
    await signIn(page, u)
    await page.getByRole('link', { name: 'New workflow' }).click()
    await page.getByRole('heading', { level: 1, name: 'New workflow' }).waitFor()

    // nothing filled in: the name and the first step's prompt are asked for, each beside its field
    await page.getByRole('button', { name: 'Create workflow' }).click()
    const name = page.getByLabel('Name', { exact: true })
    await page.getByText('Give the workflow a name.').waitFor()
    t.equal(await name.getAttribute('aria-invalid'), 'true', 'the name is marked')
    t.match(await name.getAttribute('aria-describedby'), /wf-name-problem/, 'and tells its problem')
    t.ok(await name.evaluate((el) => (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument
      .activeElement === el), 'the first field with a problem takes the focus')
    const prompt = page.getByLabel('Prompt of step 1')
    t.equal(await prompt.getAttribute('aria-invalid'), 'true')
    t.equal(await page.locator('#wf-steps-0-prompt-problem').textContent(), 'Prompt is needed.')

    await name.fill('Release notes')
    await page.getByLabel('Description (optional)').fill('Notes of a release, for review.')
    await page.getByRole('button', { name: 'Add input' }).click()
    await page.getByLabel('Name of input 1').fill('version')
    await page.getByRole('group', { name: 'Input 1' }).getByLabel('Required').check()
    await page.getByRole('button', { name: 'Add input' }).click()
    await page.getByLabel('Name of input 2').fill('audience')
    await page.getByLabel('Default of input 2 (optional)').fill('the team')
    await page.getByLabel('Id of step 1').fill('find')
    await page.getByLabel('Type of step 1').selectOption('search_knowledge')
    // a template naming an input that is not declared: the API's problem, shown beside the query
    await page.getByLabel('Query of step 1').fill('changes in {{inputs.release}}')
    await page.getByRole('button', { name: 'Add step' }).click()
    await page.getByLabel('Id of step 2').fill('write')
    await page.getByLabel('Type of step 2').selectOption('create_artifact')
    await page.getByLabel('Artifact type of step 2').selectOption('research_summary')
    await page.getByLabel('Title of step 2').fill('Notes on {{inputs.version}} for {{inputs.audience}}')
    await page.getByLabel('Content (JSON object, optional) of step 2').fill('{"summary": ')
    await page.getByRole('button', { name: 'Create workflow' }).click()
    await page.locator('#wf-steps-1-content-problem').getByText(/Not a JSON object/).waitFor()
    t.equal(await page.getByText('Give the workflow a name.').count(), 0, 'a fixed problem is gone')

    await page.getByLabel('Content (JSON object, optional) of step 2').fill('{"summary": "{{steps.find.output}}"}')
    await page.getByRole('button', { name: 'Create workflow' }).click()
    const query = page.getByLabel('Query of step 1')
    await page.locator('#wf-steps-0-query-problem').getByText(/\{\{inputs\.release\}\} names an undeclared input/)
      .waitFor()
    t.equal(await query.getAttribute('aria-invalid'), 'true', 'the API\'s problem is beside the query')
    t.equal(await page.locator('#wf-steps-0-query-problem').textContent(),
      '{{inputs.release}} names an undeclared input', 'said without the step and field it sits beside')
    t.equal((await app.inject({ url: '/api/v2/workflows', headers: { ...u.auth, 'x-workspace-id': u.workspaceId } }))
      .json().workflows.length, 0, 'nothing was saved')
    await shot(page, 'workflow-editor')

    await query.fill('changes in {{inputs.version}}')
    await page.getByRole('button', { name: 'Create workflow' }).click()
    await page.getByRole('heading', { level: 1, name: 'Release notes' }).waitFor()
    const inWs = { ...u.auth, 'x-workspace-id': u.workspaceId }
    const saved = (await app.inject({ url: '/api/v2/workflows', headers: inWs })).json().workflows
    t.match(saved, [{ name: 'Release notes', description: 'Notes of a release, for review.',
      inputs: [{ name: 'version', required: true }, { name: 'audience', default: 'the team' }],
      steps: [{ id: 'find', type: 'search_knowledge', query: 'changes in {{inputs.version}}' },
        { id: 'write', type: 'create_artifact', artifactType: 'research_summary',
          title: 'Notes on {{inputs.version}} for {{inputs.audience}}',
          content: { summary: '{{steps.find.output}}' } }] }], 'saved as the form said')

    // edited: renamed, the steps swapped back into order after a move, a third step added and removed
    await page.getByRole('link', { name: 'Edit workflow' }).click()
    await page.getByRole('heading', { level: 1, name: 'Edit Release notes' }).waitFor()
    t.equal(await page.getByLabel('Query of step 1').inputValue(), 'changes in {{inputs.version}}', 'filled in')
    await page.getByLabel('Name', { exact: true }).fill('Release notes, checked')
    await page.getByRole('button', { name: 'Move step 2 up' }).click()
    t.equal(await page.getByLabel('Id of step 1').inputValue(), 'write', 'moved')
    await page.getByRole('button', { name: 'Save workflow' }).click()
    await page.locator('#wf-steps-0-content-problem').getByText(/names no earlier step/).waitFor()
    t.pass('a step moved before the one it reads from is refused, beside its field')
    await page.getByRole('button', { name: 'Move step 1 down' }).click()
    await page.getByRole('button', { name: 'Add step' }).click()
    await page.getByRole('button', { name: 'Remove step 3' }).click()

    // on a schedule: a required input needs a default (nobody is asked), and the cron must be one
    const cron = page.getByLabel('Schedule (cron, optional)')
    await cron.fill('0 9 * * 1')
    await page.getByRole('button', { name: 'Save workflow' }).click()
    await page.locator('#wf-schedule-cron-problem').getByText(/nobody to ask for “version”/).waitFor()
    await page.getByLabel('Default of input 1 (optional)').fill('1.0')
    await cron.fill('every monday')
    await page.getByRole('button', { name: 'Save workflow' }).click()
    await page.locator('#wf-schedule-cron-problem').getByText(/.+/).waitFor()
    t.notMatch(await page.locator('#wf-schedule-cron-problem').textContent(), /nobody to ask|^schedule/,
      'the API\'s refusal of the cron, beside it')
    t.equal(await cron.getAttribute('aria-invalid'), 'true')
    await cron.fill('0 9 * * 1')
    await page.getByRole('button', { name: 'Save workflow' }).click()
    await page.getByRole('heading', { level: 1, name: 'Release notes, checked' }).waitFor()
    await page.getByText('Also runs on the schedule').waitFor()
    const edited = (await app.inject({ url: '/api/v2/workflows', headers: inWs })).json().workflows[0]
    t.match(edited, { name: 'Release notes, checked', schedule: { cron: '0 9 * * 1' },
      inputs: [{ name: 'version', required: true, default: '1.0' }, { name: 'audience' }],
      steps: [{ id: 'find' }, { id: 'write' }] }, 'saved as edited')
    t.equal(edited.steps.length, 2)

    // and it runs
    await page.getByLabel('version (required)').fill('2.1')
    await page.getByRole('button', { name: 'Run workflow' }).click()
    await page.getByRole('status').filter({ hasText: 'Status: Completed' }).waitFor({ timeout: 30_000 })
    await page.getByRole('link', { name: 'Notes on 2.1 for the team' }).waitFor()
    t.pass('the edited workflow ran to its artifact')
  })

  await t.test('a member edits only their own; another organization\'s workflow is not found; fits a phone',
    async (t) => {
      const owner = await signup(app)
      const member = await addUser(app, owner, 'member')
      await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
        payload: { userId: member.userId, role: 'member' } })
      const made = await app.inject({ method: 'POST', url: '/api/v2/workflows',
        headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId },
        payload: { name: 'Owner flow', steps: [{ id: 'a', type: 'search_knowledge', query: 'x' }] } })
      const id = made.json().workflow.id as string

      const page = await open(t, `/workflows/${id}`, PHONE)
      await signIn(page, member)
      await page.getByRole('heading', { level: 1, name: 'Owner flow' }).waitFor()
      t.equal(await page.getByRole('link', { name: 'Edit workflow' }).count(), 0, 'not the member\'s to change')
      await page.goto(`${h.base}/workflows/${id}/edit`)
      await page.getByLabel('Name', { exact: true }).fill('Taken over')
      await page.getByRole('button', { name: 'Save workflow' }).click()
      await page.getByRole('alert').filter({ hasText: /creator or a workspace owner\/admin/ }).waitFor()
      t.ok(await fitsWidth(page), 'the editor fits a phone')

      const stranger = await signup(app)
      const theirs = await open(t, `/workflows/${id}/edit`)
      await signIn(theirs, stranger)
      await theirs.getByRole('heading', { level: 1, name: 'Workflow not found' }).waitFor()
      t.equal(await theirs.getByText('Owner flow').count(), 0, 'nothing of it is shown')
    })
}
