import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createArtifactStore, type ArtifactStore } from './store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** artifacts, their comments and version chains: the artifact and workflow routes share one store */
    artifactStore: ArtifactStore
  }
}

async function artifactsPlugin(app: FastifyInstance) {
  app.decorate('artifactStore', createArtifactStore(app.db, app.sqlite,
    (change) => app.workspaceEvents.publish(change)))
}

export default fp(artifactsPlugin, { name: 'cairn-artifacts', dependencies: ['cairn-db', 'cairn-workspace-events'] })
