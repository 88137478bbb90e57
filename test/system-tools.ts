import { spawnSync } from 'node:child_process'

/**
 * Operating-system programs a test needs. Where one is missing the test skips with one line that says what to
 * install, so that `npm test` passes on a machine with only Node.js; under `CI=true` (where .ci/run installs them)
 * a missing program fails the test instead, so CI never passes by skipping.
 */
export function missingPrograms(programs: readonly string[]): string[] {
  return programs.filter((program) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0)
}

interface SkippableTest {
  skip(name: string, cb: () => void): unknown
  fail(message: string): unknown
}

/** true when every program is there; otherwise skips (or, under CI, fails) `t` with what to install */
export function needsPrograms(t: SkippableTest, programs: readonly string[], install: string): boolean {
  const missing = missingPrograms(programs)
  if (missing.length === 0) return true
  const line = `needs ${missing.join(', ')}: install with \`${install}\``
  if (process.env.CI === 'true') t.fail(line)
  else t.skip(line, () => {})
  return false
}
