import { Cron } from 'croner'
import type { InputDef, WorkflowStep } from '../../schema/api/workflows.js'
import { ID_MAX, STEP_TEXT_LIMITS, type TextLimit } from './limits.js'

/**
 * `{{ name }}`: the name is trimmed where it is read. No brace inside, so a match never scans past the next brace
 * and matching stays linear in the text (a run of `{{` would make a lazy `[^}]*?` beside `\s*` quadratic).
 */
const TEMPLATE = /\{\{([^{}]*)\}\}/g
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

/** What is wrong with a workflow definition, and where (a JSON pointer into the request body). */
export interface DefinitionProblem { field: string; message: string }

/**
 * Checks what the schema cannot (docs/api/assistant.md#workflows): step ids unique identifiers, template references
 * only to declared inputs and to earlier steps, a valid cron. Returns the problems, each with the field of the
 * definition it is about (a JSON pointer into the request body, e.g. `/steps/1/query`), so a form can show it there.
 */
export function definitionProblems(inputs: InputDef[], steps: WorkflowStep[], cron?: string): DefinitionProblem[] {
  const problems: DefinitionProblem[] = []
  const at = (field: string, message: string) => problems.push({ field, message })
  const inputNames = new Set<string>()
  for (const [n, i] of inputs.entries()) {
    if (!IDENT.test(i.name)) at(`/inputs/${n}/name`, `input name "${i.name}" must be an identifier`)
    if (inputNames.has(i.name)) at(`/inputs/${n}/name`, `input "${i.name}" is declared twice`)
    inputNames.add(i.name)
  }
  if (steps.length === 0) at('/steps', 'a workflow needs at least one step')
  const earlier = new Set<string>()
  for (const [n, step] of steps.entries()) {
    const id = step.id
    const where = `step ${n + 1}${id ? ` ("${id}")` : ''}`
    if (!IDENT.test(id)) at(`/steps/${n}/id`, `${where}: id must be an identifier`)
    else if (earlier.has(id)) at(`/steps/${n}/id`, `${where}: id is used twice`)
    for (const [field, text] of stringsOf(step, '')) {
      const pointer = `/steps/${n}/${field.split(/[.[]/)[0]}`
      for (const m of text.matchAll(TEMPLATE)) {
        const ref = m[1].trim()
        const input = /^inputs\.([A-Za-z_][A-Za-z0-9_-]*)$/.exec(ref)
        const prior = /^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.output$/.exec(ref)
        if (input && !inputNames.has(input[1])) {
          at(pointer, `${where}: ${field}: {{${ref}}} names an undeclared input`)
        } else if (prior && !earlier.has(prior[1])) {
          at(pointer, `${where}: ${field}: {{${ref}}} names no earlier step`)
        } else if (!input && !prior) {
          at(pointer, `${where}: ${field}: {{${ref}}} is not a reference (use inputs.<name> or steps.<id>.output)`)
        }
      }
    }
    // a text whose fixed part alone is over its route's limit would fail every run
    for (const [field, limit] of Object.entries(STEP_TEXT_LIMITS[step.type] ?? {})) {
      const text = (step as Record<string, unknown>)[field]
      if (typeof text === 'string' && filledLength(text, () => '', limit.max) > limit.max) {
        at(`/steps/${n}/${field}`, `${where}: ${field} is over ${limit.max} characters, the most ${limit.what} holds`)
      }
    }
    earlier.add(id)
  }
  if (cron !== undefined) {
    try {
      new Cron(cron,
        { paused: true }).stop()
    } catch (err) { at('/schedule/cron', `schedule.cron: ${(err as Error).message}`) }
  }
  return problems
}

/** A filled step that the route it stands for would refuse: the step fails with this message, nothing is built. */
export class StepLimitError extends Error {}

/** The texts a template may name, each worked out once per step (an input object is serialized once). */
export function resolverOf(inputs: Record<string, unknown>, outputs: Record<string, string>) {
  const cache = new Map<string, string>()
  return (ref: string): string => {
    let v = cache.get(ref)
    if (v !== undefined) return v
    const input = /^inputs\.(.+)$/.exec(ref)
    if (input) {
      const given = inputs[input[1]]
      v = given === undefined || given === null ? '' : typeof given === 'string' ? given : JSON.stringify(given)
    } else {
      const prior = /^steps\.(.+)\.output$/.exec(ref)
      v = prior ? outputs[prior[1]] ?? '' : ''
    }
    cache.set(ref, v)
    return v
  }
}
type Resolve = ReturnType<typeof resolverOf>

/**
 * The length `text` would have once filled, counted without building it; past `stopAt` the count stops (a template
 * repeated a thousand times over a long output is refused at once, not after building megabytes).
 */
export function filledLength(text: string, resolve: Resolve, stopAt: number): number {
  const refs = [...text.matchAll(TEMPLATE)]
  let n = text.length
  for (const m of refs) n -= m[0].length
  for (const m of refs) {
    if (n > stopAt) break
    n += resolve(m[1].trim()).length
  }
  return n
}

/** Fills {{inputs.x}} and {{steps.<id>.output}}. */
export function fill(text: string, resolve: Resolve): string {
  return text.replace(TEMPLATE, (_m, ref: string) => resolve(ref.trim()))
}

/** `text` filled, once its length is known to be within `limit` (else StepLimitError) */
function fillWithin(text: string, resolve: Resolve, field: string, limit: TextLimit): string {
  const n = filledLength(text, resolve, limit.max)
  if (n > limit.max) {
    throw new StepLimitError(`${field} would be more than ${limit.max} characters, the most ${limit.what} holds`)
  }
  if (n < limit.min) throw new StepLimitError(`${field} would be empty, which ${limit.what} may not be`)
  return fill(text, resolve)
}

/** Every string of a free object, nested ones included. */
function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value
  else if (Array.isArray(value)) for (const v of value) yield * stringsIn(v)
  else if (value && typeof value === 'object') for (const v of Object.values(value)) yield * stringsIn(v)
}

function fillObject(value: unknown, resolve: Resolve): unknown {
  if (typeof value === 'string') return fill(value, resolve)
  if (Array.isArray(value)) return value.map((v) => fillObject(v, resolve))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillObject(v, resolve)]))
  }
  return value
}

/** The limits a filled step must keep: its texts' (STEP_TEXT_LIMITS) and an artifact content's size. */
export interface FillLimits {
  /** the most UTF-8 bytes an artifact's content may take as JSON: the artifact route's request body limit */
  readonly contentBytes: number
}

/**
 * The step with the templates of every string filled, nested ones included (`id` and `type` stay), each within the
 * limits of the route the step stands for: lengths are counted first, so an over-long text is never built.
 */
export function fillStep<S extends WorkflowStep>(step: S, inputs: Record<string, unknown>,
  outputs: Record<string, string>, limits: FillLimits): S {
  const resolve = resolverOf(inputs, outputs)
  const texts: Readonly<Record<string, TextLimit | undefined>> = STEP_TEXT_LIMITS[step.type]
  const filled: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(step)) {
    if (NOT_TEXT.has(k)) filled[k] = v
    else if (typeof v === 'string') {
      filled[k] = fillWithin(v, resolve, k, texts[k] ?? { min: 0, max: ID_MAX, what: 'an identifier' })
    } else if (v && typeof v === 'object') {
      // a free object (an artifact's content): the filled strings alone are a lower bound of its JSON size
      let n = 0
      for (const text of stringsIn(v)) {
        n += filledLength(text, resolve, limits.contentBytes - n)
        if (n > limits.contentBytes) break
      }
      const what = `${k} would be more than ${limits.contentBytes} bytes, the most an artifact's content may take`
      if (n > limits.contentBytes) throw new StepLimitError(what)
      const built = fillObject(v, resolve)
      if (Buffer.byteLength(JSON.stringify(built)) > limits.contentBytes) throw new StepLimitError(what)
      filled[k] = built
    } else filled[k] = v
  }
  return filled as S
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
