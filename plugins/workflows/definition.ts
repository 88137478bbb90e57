import { Cron } from 'croner'
import type { InputDef, WorkflowStep } from '../../schema/api/workflows.js'

const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/
/** the fields that name a step rather than carry its text: never templates */
const NOT_TEXT = new Set(['id', 'type'])

/** Every string of a step, nested ones included, with its path (for messages). */
function* stringsOf(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value]
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield * stringsOf(v, `${path}[${i}]`)
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (!(path === '' && NOT_TEXT.has(k))) yield * stringsOf(v,
      path ? `${path}.${k}` : k)
  }
}

/**
 * Checks what the schema cannot (CONTRACT.md §9): step ids unique identifiers, template references only to
 * declared inputs and to earlier steps, a valid cron. Returns the problems.
 */
export function definitionProblems(inputs: InputDef[], steps: WorkflowStep[], cron?: string): string[] {
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
    const id = step.id
    const where = `step ${n + 1}${id ? ` ("${id}")` : ''}`
    if (!IDENT.test(id)) problems.push(`${where}: id must be an identifier`)
    else if (earlier.has(id)) problems.push(`${where}: id is used twice`)
    for (const [field, text] of stringsOf(step, '')) {
      for (const m of text.matchAll(TEMPLATE)) {
        const ref = m[1]
        const input = /^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$/.exec(ref)
        const prior = /^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.output$/.exec(ref)
        if (input && !inputNames.has(input[1])) {
          problems.push(`${where}: ${field}: {{${ref}}} names an undeclared input`)
        } else if (prior && !earlier.has(prior[1])) {
          problems.push(`${where}: ${field}: {{${ref}}} names no earlier step`)
        } else if (!input && !prior) {
          problems.push(`${where}: ${field}: {{${ref}}} is not a reference (use inputs.<name> or steps.<id>.output)`)
        }
      }
    }
    earlier.add(id)
  }
  if (cron !== undefined) {
    try {
      new Cron(cron,
        { paused: true }).stop()
    } catch (err) { problems.push(`schedule.cron: ${(err as Error).message}`) }
  }
  return problems
}

/** Fills {{inputs.x}} and {{steps.<id>.output}}. */
export function fill(text: string, inputs: Record<string, unknown>, outputs: Record<string, string>): string {
  return text.replace(TEMPLATE, (_m, ref: string) => {
    const input = /^inputs\.(.+)$/.exec(ref)
    if (input) {
      const v = inputs[input[1]]; return v === undefined || v === null ? ''
        : typeof v === 'string' ? v : JSON.stringify(v)
    }
    const prior = /^steps\.(.+)\.output$/.exec(ref)
    return prior ? outputs[prior[1]] ?? '' : ''
  })
}

/** The step with the templates of every string filled, nested ones included (`id` and `type` stay). */
export function fillStep<S extends WorkflowStep>(step: S, inputs: Record<string, unknown>,
  outputs: Record<string, string>): S {
  const walk = (value: unknown, top: boolean): unknown => {
    if (typeof value === 'string') return fill(value, inputs, outputs)
    if (Array.isArray(value)) return value.map((v) => walk(v, false))
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, top && NOT_TEXT.has(k) ? v : walk(v, false)]))
    }
    return value
  }
  return walk(step, true) as S
}

/** The run's inputs: given values, then defaults; undefined names of missing required inputs. */
export function resolveInputs(defs: InputDef[],
  given: Record<string, unknown>): { inputs: Record<string, unknown>; missing: string[] } {
  const inputs: Record<string, unknown> = {}
  const missing: string[] = []
  for (const d of defs) {
    if (given[d.name] !== undefined) inputs[d.name] = given[d.name]
    else if (d.default !== undefined) inputs[d.name] = d.default
    else if (d.required) missing.push(d.name)
  }
  return { inputs, missing }
}
