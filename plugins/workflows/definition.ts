import { Cron } from 'croner'
import { ARTIFACT_TYPES } from '../../schema/api/artifacts.js'

export interface InputDef { name: string; required?: boolean; default?: unknown }
export type Step =
  | { id: string; type: 'llm'; prompt: string }
  | { id: string; type: 'search_knowledge'; query: string; limit?: number }
  | { id: string; type: 'agent'; agentId: string; message: string }
  | { id: string; type: 'post_message'; channelId: string; content: string }
  | { id: string; type: 'create_artifact'; artifactType: string; title: string; content?: Record<string, unknown> }

export const STEP_TYPES = ['llm', 'search_knowledge', 'agent', 'post_message', 'create_artifact'] as const
const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

/** The template fields of each step type: the strings that may hold {{…}} references. */
const TEXT_FIELDS: Record<Step['type'], string[]> = {
  llm: ['prompt'], search_knowledge: ['query'], agent: ['message'], post_message: ['content'], create_artifact: ['title']
}
const REQUIRED: Record<Step['type'], string[]> = {
  llm: ['prompt'], search_knowledge: ['query'], agent: ['agentId', 'message'], post_message: ['channelId', 'content'], create_artifact: ['artifactType', 'title']
}

/**
 * Checks a definition (CONTRACT.md §9): step ids unique identifiers, known step types with their fields,
 * template references only to declared inputs and to earlier steps, a valid cron. Returns the problems.
 */
export function definitionProblems(inputs: InputDef[], steps: Array<Record<string, unknown>>, cron?: string): string[] {
  const problems: string[] = []
  const inputNames = new Set<string>()
  for (const i of inputs) {
    if (!IDENT.test(i.name)) problems.push(`input name "${i.name}" must be an identifier`)
    if (inputNames.has(i.name)) problems.push(`input "${i.name}" is declared twice`)
    inputNames.add(i.name)
  }
  if (steps.length === 0) problems.push('a workflow needs at least one step')
  const earlier = new Set<string>()
  for (const [n, step] of steps.entries()) {
    const id = String(step.id ?? '')
    const where = `step ${n + 1}${id ? ` ("${id}")` : ''}`
    if (!IDENT.test(id)) problems.push(`${where}: id must be an identifier`)
    else if (earlier.has(id)) problems.push(`${where}: id is used twice`)
    const type = step.type as Step['type']
    if (!(STEP_TYPES as readonly string[]).includes(type)) {
      problems.push(`${where}: unknown type "${String(step.type)}" (one of ${STEP_TYPES.join(', ')})`)
      earlier.add(id)
      continue
    }
    for (const f of REQUIRED[type]) if (typeof step[f] !== 'string' || (step[f] as string).length === 0) problems.push(`${where}: ${f} is required`)
    if (type === 'create_artifact' && typeof step.artifactType === 'string' && !(ARTIFACT_TYPES as readonly string[]).includes(step.artifactType)) {
      problems.push(`${where}: unknown artifactType "${step.artifactType}"`)
    }
    if (type === 'search_knowledge' && step.limit !== undefined && !(Number.isInteger(step.limit) && (step.limit as number) >= 1 && (step.limit as number) <= 20)) {
      problems.push(`${where}: limit must be 1 to 20`)
    }
    for (const f of TEXT_FIELDS[type]) {
      const text = typeof step[f] === 'string' ? step[f] as string : ''
      for (const m of text.matchAll(TEMPLATE)) {
        const ref = m[1]
        const input = /^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$/.exec(ref)
        const prior = /^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.output$/.exec(ref)
        if (input && !inputNames.has(input[1])) problems.push(`${where}: {{${ref}}} names an undeclared input`)
        else if (prior && !earlier.has(prior[1])) problems.push(`${where}: {{${ref}}} names no earlier step`)
        else if (!input && !prior) problems.push(`${where}: {{${ref}}} is not a reference (use inputs.<name> or steps.<id>.output)`)
      }
    }
    earlier.add(id)
  }
  if (cron !== undefined) {
    try { new Cron(cron, { paused: true }).stop() } catch (err) { problems.push(`schedule.cron: ${(err as Error).message}`) }
  }
  return problems
}

/** Fills {{inputs.x}} and {{steps.<id>.output}}. */
export function fill(text: string, inputs: Record<string, unknown>, outputs: Record<string, string>): string {
  return text.replace(TEMPLATE, (_m, ref: string) => {
    const input = /^inputs\.(.+)$/.exec(ref)
    if (input) { const v = inputs[input[1]]; return v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v) }
    const prior = /^steps\.(.+)\.output$/.exec(ref)
    return prior ? outputs[prior[1]] ?? '' : ''
  })
}

/** The run's inputs: given values, then defaults; undefined names of missing required inputs. */
export function resolveInputs(defs: InputDef[], given: Record<string, unknown>): { inputs: Record<string, unknown>; missing: string[] } {
  const inputs: Record<string, unknown> = {}
  const missing: string[] = []
  for (const d of defs) {
    if (given[d.name] !== undefined) inputs[d.name] = given[d.name]
    else if (d.default !== undefined) inputs[d.name] = d.default
    else if (d.required) missing.push(d.name)
  }
  return { inputs, missing }
}
