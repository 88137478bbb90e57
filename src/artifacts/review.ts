import { createHash } from 'node:crypto'

/**
 * Who may change an artifact's review state: the one place for the machine-review rules
 * (docs/api/artifacts.md#human-review). A person (a user session, or the service key acting as an owner) may do
 * anything the routes allow; an API key is a machine:
 * - it neither approves nor rejects an artifact whose `review_policy` is `request_review`, nor lifts that policy
 *   (403 `HUMAN_REVIEW_REQUIRED`);
 * - once a person has approved or rejected such an artifact, the decision and what it was made on are final to
 *   machines: no edit, status change, supersede or deletion (409 `ARTIFACT_REVIEWED`). A machine that wants to
 *   go on makes a new artifact whose `parent_artifact_id` is the reviewed one; a person may still change,
 *   reopen or supersede it.
 */
export type Actor = 'person' | 'key'

/** What a request would do to an artifact. */
export interface ReviewChange {
  /** the status asked for (status route) */
  status?: string
  /** the review policy asked for (PATCH, supersede) */
  policy?: string
  /** title, content or confidence would change (PATCH) */
  edits?: boolean
  /** the original would become superseded (supersede route) */
  supersedes?: boolean
  deletes?: boolean
}

/** The review state of an artifact as stored. */
export interface ReviewState {
  reviewPolicy: string
  status: string
  statusSetBy: string | null
}

export type ReviewRefusal = 'HUMAN_REVIEW_REQUIRED' | 'ARTIFACT_REVIEWED'

const DECISIONS = new Set(['approved', 'rejected'])

/** Whether a person's approval or rejection of a `request_review` artifact stands. */
export function decidedByPerson(a: ReviewState): boolean {
  return a.reviewPolicy === 'request_review' && DECISIONS.has(a.status) && a.statusSetBy === 'person'
}

/** Why `actor` may not make `change` to an artifact in state `a`, or undefined when it may. */
export function reviewRefusal(actor: Actor, a: ReviewState, change: ReviewChange): ReviewRefusal | undefined {
  if (actor === 'person' || a.reviewPolicy !== 'request_review') return undefined
  const decides = change.status !== undefined && DECISIONS.has(change.status)
  const lifts = change.policy !== undefined && change.policy !== 'request_review'
  if (decides || lifts) return 'HUMAN_REVIEW_REQUIRED'
  const changes = change.status !== undefined || change.policy !== undefined || change.edits === true ||
    change.supersedes === true || change.deletes === true
  if (changes && decidedByPerson(a)) return 'ARTIFACT_REVIEWED'
  return undefined
}

/** The fingerprint of what a reviewer saw: the title and the stored content, as stored. */
export function reviewedSha256(title: string, content: string): string {
  return createHash('sha256').update(title).update('\0').update(content).digest('hex')
}
