// TypeScript for the test processes (.taprc): each .ts file through esbuild, whitespace kept, with an inline
// source map. tap's own ts-node transpiled all of src/ with the TypeScript compiler again in every test file
// (~3 s of CPU each); tsx minifies whitespace, which left tap's line coverage a statement or two per file.
import { register } from 'node:module'
import { fileURLToPath } from 'node:url'

register('./ts-hooks.mjs', import.meta.url)
// .taprc names this file relative to the project: child processes started elsewhere get its absolute path
process.env.NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '')
  .replace('--import=./test/ts-loader.mjs', `--import=${fileURLToPath(import.meta.url)}`)
