import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import preact from '@preact/preset-vite'

const here = fileURLToPath(new URL('.', import.meta.url))

/**
 * The client library reads an upload given by its file path with `node:fs/promises` and `node:path`, which a page
 * never does (it uploads File objects): in the console these two are a module that says so, instead of Vite's
 * warnings on every build that it left them out.
 */
const NODE_ONLY = '\0cairn-node-only'
const nodeOnly = {
  name: 'cairn-node-only',
  enforce: 'pre' as const,
  resolveId: (id: string) => id === 'node:fs/promises' || id === 'node:path' ? NODE_ONLY : undefined,
  load: (id: string) => id === NODE_ONLY
    ? 'const nodeOnly = () => { throw new Error("a file path is read by Node.js, not in a browser") }\n' +
      'export const readFile = nodeOnly\nexport const basename = nodeOnly\n'
    : undefined
}

/** The console, built into dist/console, which the service serves at `/` (src/http/console.ts). */
export default defineConfig({
  root: here,
  base: '/',
  plugins: [nodeOnly, preact({ prerender: { enabled: false } })],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // the page's CSP allows no inline script: Vite's preload helper is bundled, never inlined
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 200
  },
  server: {
    // `npm run console:dev`: the API of a Cairn running on port 3000
    proxy: { '/api': 'http://127.0.0.1:3000' }
  }
})
