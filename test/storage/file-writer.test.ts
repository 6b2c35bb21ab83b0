// The file writer's thread: a data file's create (whole or not at all, never over an existing
// name, no temp left) and content-addressed block batches, on real files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createFileWriter } from '../../src/storage/file-writer.js'
import { tempDir } from '../support/tmp.js'

test('createNew writes a new name whole with its mode and mtime, never over an existing one, leaves no temp, and keeps the errno of a failure', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter()
  t.after(async () => { await writer.close() })
  const path = join(dir, 'scope', 'a.json') // the folder is created
  const first = await writer.createNew(path, Buffer.from('{"a":1}'))
  assert.equal(first.written, true)
  const st = await stat(path)
  assert.equal(st.mtimeMs, first.mtimeMs, 'the mtime the index records')
  assert.equal(st.mode & 0o777, 0o600)
  const second = await writer.createNew(path, Buffer.from('{"b":2}'))
  assert.equal(second.written, false, 'the name is taken')
  assert.equal(await readFile(path, 'utf8'), '{"a":1}', 'the first file stays')
  assert.deepEqual(await readdir(join(dir, 'scope')), ['a.json'], 'no temp left behind')
  await writeFile(join(dir, 'plain'), 'x')
  await assert.rejects(writer.createNew(join(dir, 'plain', 'b.json'), Buffer.from('{}')), { code: 'ENOTDIR' })
})

test('writeBlocks writes missing blocks, keeps one of the right size, replaces one of another size, and works again after its thread ended idle', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter({ idleMs: 20 })
  t.after(async () => { await writer.close() })
  const a = join(dir, 'AB', 'a.data')
  const b = join(dir, 'CD', 'b.data')
  await writer.writeBlocks([{ path: a, bytes: Buffer.from('aaaa') }])
  assert.equal(await readFile(a, 'utf8'), 'aaaa')
  await new Promise((resolve) => setTimeout(resolve, 100)) // the thread ends
  await writer.writeBlocks([{ path: a, bytes: Buffer.from('zzzz') }, { path: b, bytes: Buffer.from('bb') }])
  assert.equal(await readFile(a, 'utf8'), 'aaaa', 'same size: the same content-addressed block, not rewritten')
  assert.equal(await readFile(b, 'utf8'), 'bb')
  await writeFile(b, 'b') // torn
  await writer.writeBlocks([{ path: b, bytes: Buffer.from('bb') }])
  assert.equal(await readFile(b, 'utf8'), 'bb', 'a torn block is replaced')
  assert.deepEqual((await readdir(join(dir, 'CD'))).sort(), ['b.data'], 'no temp left behind')
})
