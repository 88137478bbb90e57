import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { tempDir } from '../helper.js'
import { ROOT, codeBlockAfter, readPage } from './pages.js'
import { run, server, checkOutput } from './client-examples.js'

// The TypeScript example of docs/clients.md, run as a reader would run it (see client-examples.ts)
t.test('the TypeScript example of docs/clients.md', async (t) => {
  const example = codeBlockAfter(readPage('docs/clients.md'), 'TypeScript: `@cairn/client`', 'ts')
  const dir = tempDir(t)
  // the package as a project installs it: built by its own tsc configuration into node_modules/@cairn/client
  const pkg = path.join(dir, 'node_modules', '@cairn', 'client')
  fs.mkdirSync(pkg, { recursive: true })
  fs.copyFileSync(path.join(ROOT, 'clients/typescript/package.json'), path.join(pkg, 'package.json'))
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '-p', path.join(ROOT, 'clients/typescript/tsconfig.json'), '--outDir', path.join(pkg, 'dist')])
  fs.writeFileSync(path.join(dir, 'example.mts'), example)
  // it type-checks as a strict project would compile it
  const tsc = await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    '--skipLibCheck', '--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node', 'example.mts'],
  { cwd: dir }).then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
  t.equal(tsc, '', 'the example type-checks')

  const { app, env, approved } = await server(t)
  const out = await run(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'example.mts'],
    { cwd: dir, env: { ...env, NODE_OPTIONS: '' } })
  checkOutput(t, app, out, approved)
})
