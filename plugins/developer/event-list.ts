import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors } from '../../schema/api/common.js'
import { WebhookEventsResponse } from '../../schema/api/developer.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { EVENT_INFO, EVENT_NAMES } from '../../src/events/names.js'

/** The names a webhook may subscribe to, so that pickers (the console's, an integration's) need no copy of them. */
const EVENTS = EVENT_NAMES.map((name) => ({ name, ...EVENT_INFO[name] }))

const eventList: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/webhooks/events', {
    config: { action: 'webhooks.events' },
    schema: {
      tags: ['webhooks'], summary: 'The event names a webhook may subscribe to, with what each tells',
      response: { 200: WebhookEventsResponse, ...errors(403) }
    }
  }, (request) => {
    // the same list for everyone signed in: nothing of a tenant is in it
    requirePrincipal(request)
    return { success: true as const, data: EVENTS }
  })
}
export default eventList
