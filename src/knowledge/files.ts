import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'

/** Where the knowledge base keeps files under the data dir: uploads in flight, originals, extracted text. */
export function knowledgeFiles(dataDir: string) {
  const root = path.join(dataDir, 'knowledge')
  const dirs = { tmp: path.join(root, 'tmp'), originals: path.join(root, 'originals'), text: path.join(root, 'text') }
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true })
  return {
    dirs,
    /** stored paths are relative to the data dir */
    originalRel: (id: string) => path.join('knowledge', 'originals', id),
    textRel: (id: string) => path.join('knowledge', 'text', `${id}.txt`),
    abs: (rel: string) => path.join(dataDir, rel),
    async removeQuietly(...paths: Array<string | null | undefined>) {
      await Promise.all(paths.filter((p): p is string => !!p).map((p) => fsp.rm(p, { force: true })))
    },
    /** uploads cut short by a crash leave files in tmp: nothing refers to them */
    clearTmp() {
      for (const name of fs.readdirSync(dirs.tmp)) fs.rmSync(path.join(dirs.tmp, name), { force: true })
    },
    /**
     * A crash between storing an upload's files and recording its document leaves files no row names:
     * removed at start. Returns how many.
     */
    async sweepOrphans(isDocument: (id: string) => boolean) {
      let removed = 0
      for (const [dir, strip] of [[dirs.originals, ''], [dirs.text, '.txt']] as const) {
        for (const name of await fsp.readdir(dir)) {
          if (!isDocument(strip ? name.slice(0, -strip.length)
            : name)) { await fsp.rm(path.join(dir, name), { force: true }); removed++ }
        }
      }
      return removed
    }
  }
}

export type KnowledgeFiles = ReturnType<typeof knowledgeFiles>
