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

/** the PostgreSQL server the tests use: CAIRN_TEST_POSTGRES_URL, else the local one Debian's `postgresql` runs */
export const testPostgresUrl = process.env.CAIRN_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * true when a PostgreSQL server answers at `url`; when none does (nothing listens there, no such host), skips (or,
 * under CI, fails) `t` with how to start one. A server that answers but refuses (a wrong user or database) is not a
 * reason to skip: the test goes on and fails on it.
 */
export async function needsPostgres(t: SkippableTest, url = testPostgresUrl): Promise<boolean> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    return true
  } catch (err) {
    const { code, message } = err as { code?: string; message?: string }
    const unreachable = ['ECONNREFUSED', 'ENOENT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].includes(code ?? '') ||
      /timeout/i.test(message ?? '')
    if (!unreachable) return true
    const { host, port } = new URL(url)
    const line = `needs a PostgreSQL server at ${host}${port ? '' : ':5432'} (CAIRN_TEST_POSTGRES_URL): ` +
      'start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, ' +
      'or install Debian\'s `postgresql`'
    if (process.env.CI === 'true') t.fail(line)
    else t.skip(line, () => {})
    return false
  } finally {
    await client.end().catch(() => {})
  }
}
