import t from 'tap'
import { build, signup, addUser, createKey } from '../../helper.js'
import { EVENT_NAMES } from '../../../src/events/names.js'

const EVENTS = '/api/v2/developer/webhooks/events'
type Event = { name: string; description: string; sent: boolean }

t.test('the webhook event names: the ones a subscription accepts, the same for every organization', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const owner = await signup(app)
  const member = await addUser(app, owner, 'member')
  const stranger = await signup(app)

  const res = await app.inject({ url: EVENTS, headers: member.auth })
  t.equal(res.statusCode, 200, res.body)
  const events = res.json().data as Event[]
  t.same(events.map((e) => e.name), [...EVENT_NAMES], 'every name a webhook may subscribe to')
  t.same(events.filter((e) => e.sent).map((e) => e.name), ['message.created', 'workflow.completed', 'test.ping'],
    'the ones this version sends')
  for (const e of events) t.ok(e.description.length > 10, `${e.name} says what it tells`)
  t.same((await app.inject({ url: EVENTS, headers: stranger.auth })).json(), res.json(),
    'another organization reads the same list: nothing of a tenant is in it')

  const hooks = `/api/v2/developer/webhooks?workspaceId=${owner.workspaceId}`
  const created = await app.inject({ method: 'POST', url: hooks, headers: owner.auth,
    payload: { url: 'http://127.0.0.1:9/hook', events: events.map((e) => e.name) } })
  t.equal(created.statusCode, 201, 'a subscription to every listed name is accepted')
  const unknown = await app.inject({ method: 'POST', url: hooks, headers: owner.auth,
    payload: { url: 'http://127.0.0.1:9/hook', events: ['document.deleted'] } })
  t.equal(unknown.statusCode, 400, 'a name not listed is refused')
  t.equal(unknown.json().code, 'UNKNOWN_EVENT')
})

t.test('who may read the list: signed-in people and keys with the read scope', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const none = await app.inject({ url: EVENTS })
  t.equal(none.statusCode, 401, 'no credential')
  t.equal(none.json().error.code ?? none.json().code, 'UNAUTHORIZED')
  const reader = await createKey(app, owner, ['read'])
  t.equal((await app.inject({ url: EVENTS, headers: { authorization: `Bearer ${reader.key}` } })).statusCode, 200)
  const writer = await createKey(app, owner, ['artifacts:write'])
  const refused = await app.inject({ url: EVENTS, headers: { authorization: `Bearer ${writer.key}` } })
  t.equal(refused.statusCode, 403, 'a key without the read scope')
})

t.test('the route is described in the OpenAPI document', async (t) => {
  const app = await build(t)
  const doc = (await app.inject({ url: '/api/docs/json' })).json()
  const op = doc.paths['/api/v2/developer/webhooks/events']?.get
  t.ok(op, 'listed')
  t.ok(op.tags.includes('webhooks'))
  const item = op.responses['200'].content['application/json'].schema.properties.data.items
  t.same(Object.keys(item.properties).sort(), ['description', 'name', 'sent'])
})
