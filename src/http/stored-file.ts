import fsp, { type FileHandle } from 'node:fs/promises'
import { HttpError } from './errors.js'

/**
 * A stored file opened for sending, with its size; 410 STORED_FILE_MISSING when the database names it but the data
 * directory does not hold it (restored without its files): the row exists, its bytes are gone.
 */
export async function openStored(file: string, what: string): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle
  try {
    handle = await fsp.open(file, 'r')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw storedFileMissing(what)
    throw err
  }
  try {
    return { handle, size: (await handle.stat()).size }
  } catch (err) {
    await handle.close()
    throw err
  }
}

export function storedFileMissing(what: string): HttpError {
  return new HttpError(410, `The stored file of this ${what} is missing from the server's data directory (restored ` +
    'without its files?); an administrator can put the file back, or it can be uploaded again', 'STORED_FILE_MISSING')
}
