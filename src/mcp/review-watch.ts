/**
 * In-process notice of artifact changes, for `wait_for_review`: a waiter subscribes to one artifact id and
 * is called when a route that changes that artifact has answered successfully. Nothing polls the database.
 */
export interface ReviewWatch {
  /** calls `listener` on each change of artifact `id`; returns the unsubscribe function */
  watch(id: string, listener: () => void): () => void
  notify(id: string): void
  /** number of artifacts being waited on (tests) */
  size(): number
}

export function createReviewWatch(): ReviewWatch {
  const listeners = new Map<string, Set<() => void>>()
  return {
    watch(id, listener) {
      let set = listeners.get(id)
      if (!set) listeners.set(id, (set = new Set()))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(id) === set) listeners.delete(id)
      }
    },
    notify(id) {
      for (const listener of [...listeners.get(id) ?? []]) listener()
    },
    size: () => listeners.size
  }
}

/** The routes after whose success an artifact's status may have changed (by `METHOD url`). */
export const ARTIFACT_CHANGING_ROUTES = new Set([
  'POST /api/v2/artifacts/:id/status',
  'POST /api/v2/artifacts/:id/supersede',
  'PATCH /api/v2/artifacts/:id',
  'DELETE /api/v2/artifacts/:id'
])
