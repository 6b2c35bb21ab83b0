// What `hearth storage migrate` needs from a stopped home: every CID the home references (data
// ciphertexts and pinned schema definitions), and the storage section of config.json.
import { writeFile, rename } from 'node:fs/promises'
import type { HomeLayout } from '../home.js'
import { openDatabase, openKv } from '../db/database.js'
import { openFileIndex } from '../db/file-index.js'
import { createSchemaCache } from '../registry/cache.js'
import { loadConfig, readConfigFile } from '../config/resolve.js'
import type { StorageConfig } from '../storage/factory.js'
import type { StorageCommandDeps } from './commands/storage.js'

async function * referencedCids (home: HomeLayout): AsyncGenerator<string> {
  const db = await openDatabase(home.index)
  try {
    const index = await openFileIndex({ db })
    for await (const r of index.each()) if (r.cid !== null) yield r.cid
    for (const schema of await createSchemaCache(openKv(db, 'schemas')).list()) {
      if (schema.definitionUrl.startsWith('ipfs://')) yield schema.definitionUrl.slice('ipfs://'.length)
    }
  } finally {
    await db.close()
  }
}

async function setBackend (home: HomeLayout, cfg: StorageConfig): Promise<void> {
  const current = (await readConfigFile(home.config) ?? {}) as Record<string, any>
  const storage = { ...(current.storage ?? {}), backend: cfg.backend }
  if (cfg.kubo !== undefined) storage.kubo = { ...(storage.kubo ?? {}), ...cfg.kubo }
  const next = { ...current, storage }
  const temp = `${home.config}.${process.pid}.tmp`
  await writeFile(temp, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 })
  await rename(temp, home.config)
}

export const homeStorageDeps: StorageCommandDeps = {
  listCids: referencedCids,
  setBackend,
  async readBackend (home) {
    const config = await loadConfig(home.config, process.env)
    return { backend: config.storage.backend, kubo: config.storage.kubo }
  },
  // the same walk as listCids: schema definitions count too, so progress never passes the total
  async countCids (home) {
    let n = 0
    for await (const _cid of referencedCids(home)) n++
    return n
  }
}

