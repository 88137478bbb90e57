import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import preact from '@preact/preset-vite'

const here = fileURLToPath(new URL('.', import.meta.url))

/** The console, built into dist/console, which the service serves at `/` (src/http/console.ts). */
export default defineConfig({
  root: here,
  base: '/',
  plugins: [preact({ prerender: { enabled: false } })],
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
