/**
 * Every background job by name, with the payload it carries: `enqueue` and `register` are typed from this
 * map, so a handler receives its payload typed and an enqueue with a wrong payload does not compile.
 * A job's group adds its entry here (or augments the interface with `declare module`).
 */
export interface JobPayloads {
  'knowledge.index': { documentId: string }
  /** `customerId`: whose search figures count the passages until they are gone (absent in jobs queued before it was) */
  'knowledge.purge': { documentId: string; customerId?: string }
  'voice.transcribe': { noteId: string }
  'workflow.run': { runId: string }
  'knowledge.embed': Record<string, never>
  /** expands the webhook outbox and makes first attempts; no payload */
  'webhook.fanout': null
  /**
   * `messageId` (`webhook-id`): the message the seq names when the job was queued; a job whose seq now names another
   * message (the outbox file was made anew) does nothing. Absent in jobs of earlier versions.
   */
  'webhook.retry': { seq: number; retry: number; messageId?: string
    /** the webhook's organization: retries are claimed fairly per organization (absent in earlier versions' jobs) */
    org?: string }
  'webhook.redeliver': { seq: number; deliveryId: string; messageId?: string
    /** the webhook's organization: redeliveries are claimed fairly per organization (absent in older jobs) */
    org?: string }
  /**
   * queued by versions before the outbox; still delivered. `eventSeq`: the event its first run made, set in the same
   * transaction (a run after a stop makes none)
   */
  'webhook.deliver': { webhookId: string; event: string; data: object; eventSeq?: number }
}

export type JobName = keyof JobPayloads

/** The payload of a job type: from the map, or unknown for a type outside it (tests' own job types) */
export type PayloadOf<T extends string> = T extends JobName ? JobPayloads[T] : unknown
