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
    assert.equal(basename(file), `${definition.scope}.json`, 'one file per scope, named after it')
    assert.match(definition.version, /^\d+\.\d+\.\d+$/, `${file}: semantic version`)
    assert.ok((definition.description ?? '').length > 20, `${file}: describes the data`)
    const sample = JSON.parse(await readFile(new URL(`${definition.scope}.json`, SAMPLES), 'utf8')) as Sample
    const target = { definitionUrl: `shipped:${definition.scope}`, definition }
    assert.deepEqual(validators.validateData(target, sample.data), { ok: true }, `${definition.scope} sample`)
    for (const bad of sample.invalid ?? []) {
      assert.deepEqual(validators.validateData(target, bad.data), { ok: false, reasons: bad.reasons }, `${definition.scope} invalid sample`)
    }
  }
  // Every sample belongs to a shipped schema (no stale samples).
  const sampleScopes = (await readdir(SAMPLES)).map((n) => n.replace(/\.json$/, '')).sort()
  assert.deepEqual(sampleScopes, [...scopes].sort())
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
  assert.equal(first.length, shipped.length)
  assert.ok(first.every((r) => r.added && r.latest && r.schema.id === `local:${r.schema.definitionUrl.slice('ipfs://'.length)}`))
  for (const definition of shipped) {
    const resolved = await registry.byScope(definition.scope)
    assert.deepEqual(resolved?.definition, definition)
  }

  await opened.close()
  const reopened = await openCache(t, opened.dir)
  const again = createSchemaRegistry({ cache: reopened.cache, sources: [] })
  const second = await installShippedSchemas(again, storage)
  assert.ok(second.every((r) => !r.added && r.latest))
  assert.deepEqual(second.map((r) => r.schema.id), first.map((r) => r.schema.id), 'same bytes, same CIDs')
  assert.equal((await again.list()).length, shipped.length)
})
