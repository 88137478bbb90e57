import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createChannelStore, type ChannelStore } from './store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** channels and their messages: the channels, chat and workflow routes share it */
    channelStore: ChannelStore
  }
}

async function channelsPlugin(app: FastifyInstance) {
  app.decorate('channelStore', createChannelStore(app.db, app.sqlite, app.events,
    (change) => app.workspaceEvents.publish(change)))
}

export default fp(channelsPlugin,
  { name: 'cairn-channels', dependencies: ['cairn-db', 'cairn-events', 'cairn-workspace-events'] })
