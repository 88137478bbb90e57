import { Type } from '@sinclair/typebox'

/** The workspace event stream's query (the workspace may also come as x-workspace-id). */
export const StreamQuery = Type.Object({
  workspace_id: Type.Optional(Type.String({ description: 'the workspace (or the x-workspace-id header)' }))
})
