import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { build, signup, tempDir, ROOT } from '../helper.js'

const run = promisify(execFile)
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false',
  npm_config_fund: 'false', npm_config_loglevel: 'error' }

interface Packed { filename: string; files: Array<{ path: string }> }

/**
 * `npm pack` of a package folder (its prepack builds it): the tarball's path and file list, and the copy it was
 * packed from. Packed from a copy beside the project's node_modules: prepack empties the package's dist/, which other
 * test files running at the same time import from the repository's folder.
 */
async function pack(dir: string, destination: string): Promise<Packed & { built: string }> {
  const copy = path.join(destination, 'packed-from', path.basename(dir))
  fs.cpSync(dir, copy, { recursive: true, filter: (file) => !/[\\/](dist|node_modules)$/.test(file) })
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(destination, 'packed-from', 'node_modules'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination],
    { cwd: copy, env: NPM_ENV, maxBuffer: 16 * 1024 * 1024 })
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Packed[]
  return { ...packed, filename: path.join(destination, packed.filename), built: copy }
}

t.test('@cairn/client: packed with its built files, installed with nothing else, used as a consumer would',
  async (t) => {
    const dir = tempDir(t)
    const packed = await pack(path.join(ROOT, 'clients/typescript'), dir)
    const files = packed.files.map((f) => f.path)
    for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/webhooks.js',
      'dist/client.js', 'dist/generated/openapi.d.ts']) t.ok(files.includes(f), `ships ${f}`)
    t.notOk(files.some((f) => f.startsWith('dist/bin/')), 'no stdio bridge inside (it is @cairn/mcp-bridge)')
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients/typescript/package.json'), 'utf8')) as
      { dependencies?: object; peerDependencies?: object; bin?: object; scripts: Record<string, string> }
    t.same(manifest.dependencies ?? {}, {}, 'no runtime dependencies')
    t.same(manifest.peerDependencies ?? {}, {})
    for (const hook of ['prepare', 'preinstall', 'install', 'postinstall']) {
      t.notOk(manifest.scripts[hook], `no ${hook} script: installing builds nothing`)
    }
    t.ok(manifest.scripts.prepack, 'built when packed')

    // a consumer project, installed offline: only a package without dependencies can be
    const consumer = path.join(dir, 'consumer')
    fs.mkdirSync(consumer)
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true,
      type: 'module' }))
    await run('npm', ['install', '--offline', '--no-package-lock', packed.filename], { cwd: consumer, env: NPM_ENV })
    const installed = fs.readdirSync(path.join(consumer, 'node_modules'), { withFileTypes: true })
      .filter((d) => !d.name.startsWith('.')).map((d) => d.name)
    t.same(installed, ['@cairn'], 'one package installed')
    t.ok(fs.existsSync(path.join(consumer, 'node_modules/@cairn/client/README.md')), 'its README with it')

    const app = await build(t)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    const u = await signup(app)
    const script = `import { CairnClient, CairnError } from '@cairn/client'
import { verifyWebhook } from '@cairn/client/webhooks'
const { URL: baseUrl, EMAIL: email, PASSWORD: password } = process.env
const me = await CairnClient.login({ baseUrl, email, password })
const [workspace] = await me.listWorkspaces()
const key = await me.createApiKey({ name: 'consumer', scopes: ['knowledge:read', 'knowledge:write'],
  workspaceId: workspace.id })
const bound = new CairnClient({ baseUrl, token: key.key })
const { document } = await bound.uploadDocument({ data: 'Packed and installed.', fileName: 'packed.md' })
const placed = await me.getDocument(document.id)
const refused = await bound.getArtifact(workspace.id).catch((e) => e instanceof CairnError && e.statusCode)
console.log(JSON.stringify({ scope: placed.document.scope, workspace: placed.document.workspaceId === workspace.id,
  refused, verify: typeof verifyWebhook }))
`
    fs.writeFileSync(path.join(consumer, 'main.mjs'), script)
    const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: consumer,
      env: { ...process.env, URL: baseUrl, EMAIL: u.email, PASSWORD: u.password } })
    t.same(JSON.parse(stdout), { scope: 'workspace', workspace: true, refused: 403, verify: 'function' },
      'login, a bound key, an upload that lands in its workspace, a typed error')

    // and its types resolve for a TypeScript consumer: the status is a union to narrow, not a string
    fs.writeFileSync(path.join(consumer, 'typed.ts'), `import { CairnClient, type Artifact } from '@cairn/client'
export async function decided(cairn: CairnClient, id: string): Promise<boolean> {
  const a: Artifact = await cairn.getArtifact(id)
  const done: 'approved' | 'rejected' | 'superseded' | undefined =
    a.status === 'approved' || a.status === 'rejected' || a.status === 'superseded' ? a.status : undefined
  return done !== undefined
}
`)
    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit',
      '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck',
      '--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types'), 'typed.ts'],
    { cwd: consumer }).then(() => '', (err: { stdout: string }) => err.stdout)
    t.equal(tsc, '', 'compiles against the installed declarations')
  })

t.test('@cairn/mcp-bridge: the stdio bridge as its own package', async (t) => {
  const dir = tempDir(t)
  const packed = await pack(path.join(ROOT, 'clients/mcp-bridge'), dir)
  const files = packed.files.map((f) => f.path)
  for (const f of ['package.json', 'README.md', 'dist/cairn-mcp.js']) t.ok(files.includes(f), `ships ${f}`)
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients/mcp-bridge/package.json'), 'utf8')) as
    { bin: Record<string, string>; dependencies: Record<string, string>; scripts: Record<string, string> }
  t.same(manifest.bin, { 'cairn-mcp': './dist/cairn-mcp.js' })
  t.ok(manifest.dependencies['@modelcontextprotocol/sdk'], 'the MCP SDK is this package\'s dependency')
  t.notOk(manifest.scripts.prepare, 'no install-time build')
  t.match(fs.readFileSync(path.join(packed.built, 'dist/cairn-mcp.js'), 'utf8'), /^#!\/usr\/bin\/env node/)
})
