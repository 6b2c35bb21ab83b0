import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir, writeFile, copyFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { installShippedSchemas, loadShippedSchemaFiles, loadShippedSchemas, shippedSchemasDir } from '../../src/registry/shipped.js'
import { createSchemaRegistry } from '../../src/registry/resolver.js'
import { createSchemaValidators } from '../../src/registry/validators.js'
import { isHearthError } from '../../src/errors.js'
import { definitionDoc, openCache, startStorage } from '../support/registry-fixtures.js'
import { tempDir } from '../support/tmp.js'
import { openKv } from '../../src/db/database.js'
import type { StorageBackend } from '../../src/storage/types.js'

const SAMPLES = new URL('./samples/', import.meta.url)

interface Sample {
  data: unknown
  invalid?: Array<{ data: unknown; reasons: string[] }>
}

test('every shipped schema parses, is named after its scope, and has a sample that validates', async () => {
  const shipped = await loadShippedSchemaFiles()
  assert.ok(shipped.length >= 6, `at least six shipped schemas, found ${shipped.length}`)
  const scopes = shipped.map((s) => s.definition.scope)
  for (const required of ['github.profile', 'youtube.history']) assert.ok(scopes.includes(required), required)

  const validators = createSchemaValidators()
  for (const { file, definition } of shipped) {
    const newest = shipped.filter((s) => s.definition.scope === definition.scope).at(-1)!
    assert.equal(basename(file), newest.definition === definition ? `${definition.scope}.json` : `${definition.scope}@${definition.version}.json`,
      'a scope\'s current definition is named after it, an older version still shipped after its version')
    assert.match(definition.version, /^\d+\.\d+\.\d+$/, `${file}: semantic version`)
    assert.ok((definition.description ?? '').length > 20, `${file}: describes the data`)
    const sample = JSON.parse(await readFile(new URL(basename(file), SAMPLES), 'utf8')) as Sample
    const target = { definitionUrl: `shipped:${basename(file)}`, definition }
    assert.deepEqual(validators.validateData(target, sample.data), { ok: true }, `${definition.scope} sample`)
    for (const bad of sample.invalid ?? []) {
      assert.deepEqual(validators.validateData(target, bad.data), { ok: false, reasons: bad.reasons }, `${definition.scope} invalid sample`)
    }
  }
  // Every sample belongs to a shipped schema (no stale samples).
  assert.deepEqual((await readdir(SAMPLES)).sort(), shipped.map((s) => basename(s.file)).sort())
  assert.deepEqual(shipped.filter((s) => s.definition.scope === 'chatgpt.conversations').map((s) => s.definition.version), ['1.0.0', '2.0.0'], 'versions in order, oldest first')
})

test('the shipped folder is found relative to the module', async () => {
  assert.ok(shippedSchemasDir().endsWith('/schemas/'))
  assert.equal((await loadShippedSchemas()).length, (await readdir(shippedSchemasDir())).filter((n) => n.endsWith('.json')).length)
})

test('a broken shipped file fails loudly with its file name; duplicate scope versions are refused', async (t) => {
  const dir = await tempDir(t)
  await copyFile(join(shippedSchemasDir(), 'github.profile.json'), join(dir, 'github.profile.json'))
  await writeFile(join(dir, 'zz.broken.json'), JSON.stringify(definitionDoc('zz.broken', { dialect: 'csv' })))
  await assert.rejects(loadShippedSchemas(dir), (err: unknown) => {
    assert.ok(isHearthError(err, 'INVALID_SCHEMA_DEFINITION'))
    assert.match(err.message, /^shipped schema zz\.broken\.json: /)
    assert.equal(err.details?.file, join(dir, 'zz.broken.json'))
    assert.deepEqual(err.details?.reasons, ['dialect must be "json", got "csv"'])
    return true
  })
  await writeFile(join(dir, 'zz.broken.json'), '{ not json')
  await assert.rejects(loadShippedSchemas(dir), /zz\.broken\.json: .*not valid JSON/)

  await writeFile(join(dir, 'zz.broken.json'), await readFile(join(dir, 'github.profile.json')))
  await assert.rejects(loadShippedSchemas(dir), /github\.profile\.json and zz\.broken\.json both define github\.profile@1\.0\.0/)
  await assert.rejects(loadShippedSchemas(join(dir, 'missing')), (err: unknown) => isHearthError(err, 'FILE_UNREADABLE'))
})

test('installing the shipped schemas makes every scope usable offline, and a second start changes nothing', async (t) => {
  const storage = await startStorage(t)
  const opened = await openCache(t)
  const registry = createSchemaRegistry({ cache: opened.cache, sources: [] })
  const first = await installShippedSchemas(registry, storage)
  const shipped = await loadShippedSchemas()
  const current = shipped.filter((d, i) => shipped[i + 1]?.scope !== d.scope)
  assert.equal(first.length, shipped.length)
  assert.ok(first.every((r) => r.added && r.latest && r.schema.id === `local:${r.schema.definitionUrl.slice('ipfs://'.length)}`))
  for (const definition of current) {
    const resolved = await registry.byScope(definition.scope)
    assert.deepEqual(resolved?.definition, definition, `${definition.scope}: the newest shipped version is the scope's latest`)
  }
  const older = first.find((r) => r.schema.scope === 'chatgpt.conversations' && r.schema.definition.version === '1.0.0')!
  assert.equal((await registry.byDefinitionUrl(older.schema.definitionUrl))?.definition.version, '1.0.0', 'an older version stays known: its files still validate')

  await opened.close()
  const reopened = await openCache(t, opened.dir)
  const again = createSchemaRegistry({ cache: reopened.cache, sources: [] })
  const second = await installShippedSchemas(again, storage)
  assert.ok(second.every((r) => !r.added), 'nothing new')
  assert.deepEqual(second.filter((r) => !r.latest).map((r) => `${r.schema.scope}@${r.schema.definition.version}`), ['chatgpt.conversations@1.0.0', 'reddit.comments@1.0.0'], 'only the older versions are not the latest')
  assert.deepEqual(second.map((r) => r.schema.id), first.map((r) => r.schema.id), 'same bytes, same CIDs')
  assert.equal((await again.list()).length, shipped.length)
})

test('a newer shipped version replaces an older shipped one the chain registered, but never the owner\'s own choice', async (t) => {
  const storage = await startStorage(t)
  const v1 = definitionDoc('demo.items', { version: '1.0.0' })
  const v2 = definitionDoc('demo.items', { version: '2.0.0', description: 'Demo items, second version: every item with its parent.' })
  const before = await tempDir(t)
  await writeFile(join(before, 'demo.items.json'), JSON.stringify(v1))
  const after = await tempDir(t)
  await writeFile(join(after, 'demo.items@1.0.0.json'), JSON.stringify(v1))
  await writeFile(join(after, 'demo.items.json'), JSON.stringify(v2))

  for (const sticky of [false, true]) {
    const opened = await openCache(t)
    const registry = createSchemaRegistry({ cache: opened.cache, sources: [] })
    const [installed] = await installShippedSchemas(registry, storage, { dir: before })
    // the daemon registered v1 on chain: its local id became a chain id
    await registry.replaceSchemaId(installed!.schema.id, '42')
    if (sticky) await registry.addLocalSchema(definitionDoc('demo.items', { version: '1.5.0', description: 'the owner\'s own definition' }), { storage, sticky: true })
    const results = await installShippedSchemas(registry, storage, { dir: after })
    assert.deepEqual(results.map((r) => [r.schema.definition.version, r.latest]), [['1.0.0', false], ['2.0.0', !sticky]])
    assert.equal((await registry.byScope('demo.items', { refresh: 'never' }))?.definition.version, sticky ? '1.5.0' : '2.0.0')
    await opened.close()
  }
})

/** The real storage, counting the blocks stored through it (an install stores each definition's). */
function countingAdds (storage: StorageBackend): { storage: Pick<StorageBackend, 'add' | 'has'>; adds: () => number } {
  let adds = 0
  return {
    storage: { add: async (...args) => { adds++; return await storage.add(...args) }, has: async (cid) => await storage.has(cid) },
    adds: () => adds
  }
}

test('a start whose home holds what the same shipped files installed skips the install and answers as an install would', async (t) => {
  const real = await startStorage(t)
  const opened = await openCache(t)
  const record = openKv(opened.db, 'shipped-schemas')
  const registry = createSchemaRegistry({ cache: opened.cache, sources: [] })
  const first = await installShippedSchemas(registry, real, { record })
  assert.ok(first.every((r) => r.added))

  const counted = countingAdds(real)
  const again = await installShippedSchemas(createSchemaRegistry({ cache: opened.cache, sources: [] }), counted.storage, { record })
  assert.equal(counted.adds(), 0, 'nothing stored again')
  assert.deepEqual(again, await installShippedSchemas(createSchemaRegistry({ cache: opened.cache, sources: [] }), real), 'the same answer as a full install')
  assert.deepEqual(again.map((r) => [r.file, r.schema.id, r.added]), first.map((r) => [r.file, r.schema.id, false]))
})

test('a changed shipped file, a schema the cache lost or a definition block gone is installed again', async (t) => {
  const dir = await tempDir(t)
  for (const name of await readdir(shippedSchemasDir())) await copyFile(join(shippedSchemasDir(), name), join(dir, name))
  const real = await startStorage(t)
  const opened = await openCache(t)
  const record = openKv(opened.db, 'shipped-schemas')
  await installShippedSchemas(createSchemaRegistry({ cache: opened.cache, sources: [] }), real, { dir, record })

  // a changed file: its new definition is added and becomes the scope's latest
  const github = JSON.parse(await readFile(join(dir, 'github.profile.json'), 'utf8')) as { description: string }
  await writeFile(join(dir, 'github.profile.json'), JSON.stringify({ ...github, description: `${github.description} (revised)` }))
  const changed = await installShippedSchemas(createSchemaRegistry({ cache: opened.cache, sources: [] }), real, { dir, record })
  assert.deepEqual(changed.filter((r) => r.added).map((r) => r.schema.scope), ['github.profile'])
  assert.match((await opened.cache.byScope('github.profile'))!.definition.description!, /\(revised\)$/)

  // the same files, a cache that no longer holds them (the record kept apart): all added again
  const emptied = await openCache(t)
  const refilled = await installShippedSchemas(createSchemaRegistry({ cache: emptied.cache, sources: [] }), real, { dir, record })
  assert.ok(refilled.every((r) => r.added), 'every schema the cache lost is added')

  // the same files and cache, the definitions' blocks gone (another storage): stored again
  const other = countingAdds(await startStorage(t))
  const restored = await installShippedSchemas(createSchemaRegistry({ cache: opened.cache, sources: [] }), other.storage, { dir, record })
  assert.ok(other.adds() >= restored.length, 'every definition block stored again')
  for (const r of restored) assert.ok(await other.storage.has(r.schema.definitionUrl.slice('ipfs://'.length)), `${r.schema.scope}: its block is there`)
  assert.ok(restored.every((r) => !r.added), 'the schemas themselves were still known')
})
