import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile, chmod } from 'node:fs/promises'
import { join } from 'node:path'
import { createDirSync, writeFileDurably } from '../../src/storage/durable-file.js'
import { tempDir } from '../support/tmp.js'

test('durable writes: keep never overwrites, replace does, folders are made, no temp is ever left', async (t) => {
  const dir = join(await tempDir(t), 'a', 'b')
  const syncDir = createDirSync()
  const path = join(dir, 'f.json')
  const first = await writeFileDurably(path, Buffer.from('one'), { existing: 'keep', syncDir })
  assert.equal(first.written, true)
  assert.ok(first.mtimeMs > 0)
  assert.equal((await writeFileDurably(path, Buffer.from('two'), { existing: 'keep', syncDir })).written, false)
  assert.equal(await readFile(path, 'utf8'), 'one')
  assert.equal((await writeFileDurably(path, Buffer.from('three'), { existing: 'replace', syncDir })).written, true)
  assert.equal(await readFile(path, 'utf8'), 'three')
  // many writers into one folder share folder fsyncs and all land
  await Promise.all(Array.from({ length: 40 }, async (_, i) => await writeFileDurably(join(dir, `${i}.json`), Buffer.from(String(i)), { existing: 'keep', syncDir })))
  assert.equal((await readdir(dir)).filter((n) => n.endsWith('.json')).length, 41)
  assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp')), [])
  // a failing write (read-only folder) throws and leaves nothing behind
  if (process.getuid?.() !== 0) {
    await chmod(dir, 0o500)
    await assert.rejects(writeFileDurably(join(dir, 'x.json'), Buffer.from('x'), { existing: 'keep', syncDir }))
    await chmod(dir, 0o700)
    assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp') || n === 'x.json'), [])
  }
})
