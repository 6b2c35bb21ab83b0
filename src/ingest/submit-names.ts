// Where a submitted file goes: its collectedAt stamp (distinct per scope, so concurrent requests
// do not collide on one name), the next name when one is taken, whether a taken name already
// holds the same bytes (a re-delivery), and the scope folder it is written into.
import { access, mkdir } from 'node:fs/promises'
import { absoluteDataPath, resolveInsideData } from './layout.js'
import { readDataFileOrNull, sha256Hex } from './data-file.js'

export interface SubmitNames {
  /** "Now" for `scope`, a millisecond after the last one handed out for it. */
  stampNow (scope: string): string
  /** Makes the scope folder once and checks it is inside the data folder (a planted symlink must not redirect a POST). */
  checkScopeFolder (scope: string): Promise<void>
}

export function createSubmitNames (dataDir: string): SubmitNames {
  // one entry per scope with a schema, in both
  const lastStamp = new Map<string, number>()
  const checkedFolders = new Set<string>()
  return {
    stampNow (scope) {
      const ms = Math.max(Date.now(), (lastStamp.get(scope) ?? 0) + 1)
      lastStamp.set(scope, ms)
      return new Date(ms).toISOString()
    },
    async checkScopeFolder (scope) {
      if (checkedFolders.has(scope)) return
      await mkdir(absoluteDataPath(dataDir, scope), { recursive: true })
      await resolveInsideData(dataDir, scope)
      checkedFolders.add(scope)
    }
  }
}

/** collectedAt + 1 ms, so a write that collides with an existing file name gets its own. */
export function nextMillisecond (iso: string): string {
  return new Date(Date.parse(iso) + 1).toISOString()
}

/** Whether the data file at `rel` (if any) holds exactly `bytes`. */
export async function sameBytesAt (dataDir: string, rel: string, bytes: Uint8Array): Promise<'same' | 'taken'> {
  const current = await readDataFileOrNull(dataDir, rel, bytes.byteLength)
  return current !== null && sha256Hex(current) === sha256Hex(bytes) ? 'same' : 'taken'
}

export async function exists (path: string): Promise<boolean> {
  return await access(path).then(() => true, () => false)
}
