// The file writer's thread: a data file's create (whole or not at all, never over an existing
// name, no temp left) and content-addressed block batches, on real files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { watch } from 'node:fs'
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
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

test('creates asked for together each keep their own outcome (taken, failed, a folder made); with a temp folder the name\'s folder sees only the name', async (t) => {
  const dir = await tempDir(t)
  const temps = join(dir, '.writing')
  const writer = createFileWriter({ tempDir: temps })
  t.after(async () => { await writer.close() })
  const scope = join(dir, 'scope')
  await mkdir(scope)
  const events: string[] = []
  const watcher = watch(scope, (_e, name) => { events.push(String(name)) })
  t.after(() => { watcher.close() })
  await writeFile(join(scope, 'taken.json'), 'theirs')
  events.length = 0
  const pooled = Buffer.from('{"pooled":true}') // a view on Node's shared 8 KiB pool
  const results = await Promise.allSettled([
    writer.createNew(join(scope, 'a.json'), pooled),
    writer.createNew(join(scope, 'taken.json'), Buffer.from('{}')),
    writer.createNew(join(dir, 'new-scope', 'b.json'), Buffer.from('{"b":1}')),
    writer.createNew(join(scope, 'taken.json', 'c.json'), Buffer.from('{}'))
  ])
  assert.deepEqual(results.map((r) => r.status === 'fulfilled' ? r.value.written : (r.reason as NodeJS.ErrnoException).code), [true, false, true, 'ENOTDIR'])
  assert.equal(await readFile(join(scope, 'a.json'), 'utf8'), '{"pooled":true}')
  assert.equal(await readFile(join(scope, 'taken.json'), 'utf8'), 'theirs')
  assert.equal(await readFile(join(dir, 'new-scope', 'b.json'), 'utf8'), '{"b":1}', 'a missing folder is made')
  assert.deepEqual(await readdir(temps), [], 'no temp left')
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.deepEqual([...new Set(events)], ['a.json'], 'no temp appeared in the watched folder')
})

test('with spares, a create takes an empty temp made while the thread was idle (no inode allocated on its path), and the spares are removed when the thread ends', async (t) => {
  const dir = await tempDir(t)
  const temps = join(dir, '.writing')
  const writer = createFileWriter({ tempDir: temps, spares: 2, idleMs: 50 })
  t.after(async () => { await writer.close() })
  await writer.createNew(join(dir, 'first.json'), Buffer.from('{"n":1}'))
  const spares = async (): Promise<string[]> => (await readdir(temps)).filter((n) => /^\.spare\.[0-9a-f]{12}\.tmp$/.test(n))
  for (let i = 0; (await spares()).length < 2 && i < 100; i++) await new Promise((resolve) => setTimeout(resolve, 5))
  const made = await spares()
  assert.equal(made.length, 2, 'two spares made after the first create')
  const inodes = new Set(await Promise.all(made.map(async (n) => (await stat(join(temps, n))).ino)))
  const second = await writer.createNew(join(dir, 'second.json'), Buffer.from('{"n":2}'))
  assert.equal(second.written, true)
  assert.equal(await readFile(join(dir, 'second.json'), 'utf8'), '{"n":2}')
  assert.ok(inodes.has((await stat(join(dir, 'second.json'))).ino), 'the file is one of the spares')
  assert.equal((await stat(join(dir, 'second.json'))).mode & 0o777, 0o600)
  await new Promise((resolve) => setTimeout(resolve, 300)) // idle: the thread ends
  assert.deepEqual(await readdir(temps), [], 'no spare left behind')
  assert.equal((await writer.createNew(join(dir, 'third.json'), Buffer.from('{}'))).written, true, 'a new thread after the idle end')
})
