import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { transform } from 'esbuild'

const TS = /\.[cm]?ts$/

// the sources import each other with .js suffixes (NodeNext): a missing .js that has a .ts twin is the .ts
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/|^file:/.test(specifier) ||
      !/\.[cm]?js$/.test(specifier)) throw err
    return nextResolve(specifier.replace(/js$/, 'ts'), context)
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS.test(new URL(url).pathname)) return nextLoad(url, context)
  const file = fileURLToPath(url)
  const { code } = await transform(await readFile(file, 'utf8'), {
    loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcemap: 'inline', sourcefile: file
  })
  return { format: 'module', source: code, shortCircuit: true }
}
