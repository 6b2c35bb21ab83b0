// The one schema of the ingest unit tests (pipeline and service): a profile with a username.
import type { TestContext } from 'node:test'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { openDatabase, type HearthDatabase } from '../../src/db/database.js'
import { openFileIndex, type FileIndex } from '../../src/db/file-index.js'
import type { Validate } from '../../src/ingest/pipeline.js'
import { createSchemaValidators } from '../../src/registry/validators.js'
import type { ResolvedSchema } from '../../src/registry/types.js'
import { memoryStorage, type MemoryStorage } from './memory-storage.js'
import { tempDir } from './tmp.js'

export const SCOPE = 'instagram.profile'

export const SCHEMA: ResolvedSchema = {
  id: '7',
  ownerAddress: null,
  name: 'Instagram Profile',
  dialect: 'json',
  definitionUrl: 'ipfs://bafkreitestdefinition',
  scope: SCOPE,
  addedAt: null,
  definition: {
    name: 'Instagram Profile',
    version: '1.0.0',
    scope: SCOPE,
    dialect: 'json',
    schema: { type: 'object', properties: { username: { type: 'string' } }, required: ['username'] }
  }
}

/** Schema lookups that know only SCHEMA. */
export const schemaLookup = {
  byScope: async (scope: string): Promise<ResolvedSchema | null> => scope === SCOPE ? SCHEMA : null,
  byId: async (id: string): Promise<ResolvedSchema | null> => id === SCHEMA.id ? SCHEMA : null
}

/** A data file of SCOPE as a connector writes it. */
export function envelope (username: string, collectedAt: string): string {
  return JSON.stringify({ $schema: SCHEMA.definitionUrl, version: '1.0', scope: SCOPE, collectedAt, data: { username } })
}

/** A data folder, a real index in a temp folder, in-memory storage and a validator: what the pipeline works on. */
export async function ingestWorkspace (t: Pick<TestContext, 'after'>, prefix: string): Promise<{ dataDir: string; db: HearthDatabase; index: FileIndex; storage: MemoryStorage; validate: Validate }> {
  const root = await tempDir(t, prefix)
  const dataDir = join(root, 'data')
  await mkdir(dataDir)
  const db = await openDatabase(join(root, 'index'))
  t.after(async () => { await db.close() })
  const validators = createSchemaValidators()
  return { dataDir, db, index: await openFileIndex({ db }), storage: memoryStorage(), validate: (schema, data) => validators.validateData(schema, data) }
}
