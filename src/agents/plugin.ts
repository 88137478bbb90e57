import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createAgentStore, type AgentStore } from './store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** agents of the organization: the agent routes and workflow agent steps share one store */
    agentStore: AgentStore
  }
}

async function agentsPlugin(app: FastifyInstance) {
  app.decorate('agentStore', createAgentStore(app.db))
}

export default fp(agentsPlugin, { name: 'cairn-agents', dependencies: ['cairn-db'] })
