// The file writer's thread: a data file's create (whole or not at all, never over an existing
// name, no temp left) and content-addressed block batches, on real files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { watch } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createFileWriter } from '../../src/storage/file-writer.js'
import { tempDir } from '../support/tmp.js'
import { fileMtimeMs } from '../support/file-mtime.js'

test('createNew writes a new name whole with its mode and mtime, never over an existing one, leaves no temp, and keeps the errno of a failure', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter()
  t.after(async () => { await writer.close() })
  const path = join(dir, 'scope', 'a.json') // the folder is created
  const first = await writer.createNew(path, Buffer.from('{"a":1}'))
  assert.equal(first.written, true)
  const st = await stat(path)
  assert.equal(await fileMtimeMs(path), first.mtimeMs, 'the mtime the index records')
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

test('a create asked for while the thread starts is written at once; with spares, a later create takes an empty temp made while the thread was idle (no inode allocated on its path), and the spares are removed when the thread ends', async (t) => {
  const dir = await tempDir(t)
  const temps = join(dir, '.writing')
  const writer = createFileWriter({ tempDir: temps, spares: 2, idleMs: 50 })
  t.after(async () => { await writer.close() })
  await writer.createNew(join(dir, 'first.json'), Buffer.from('{"n":1}'))
  const spares = async (): Promise<string[]> => (await readdir(temps)).filter((n) => /^\.spare\.[0-9a-f]{12}\.tmp$/.test(n))
  // the first create may have run on the main thread while the thread started (it makes spares once up)
  for (let i = 0; (await spares()).length < 2 && i < 200; i++) await new Promise((resolve) => setTimeout(resolve, 25))
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

test('a create in two halves: stageNew puts the bytes in a temp (null when the name exists), publish links it with that mtime or finds the name taken, and either way removes the temp', async (t) => {
  const dir = await tempDir(t)
  const temps = join(dir, '.writing')
  const writer = createFileWriter({ tempDir: temps, spares: 2 })
  t.after(async () => { await writer.close() })
  const scope = join(dir, 'scope')
  await mkdir(scope)
  await writeFile(join(scope, 'there.json'), 'theirs')
  const [a, there, fresh, taken, dropped] = await Promise.all([
    writer.stageNew(join(scope, 'a.json'), Buffer.from('{"a":1}')),
    writer.stageNew(join(scope, 'there.json'), Buffer.from('{}')),
    writer.stageNew(join(dir, 'new-scope', 'b.json'), Buffer.from('{"b":1}')),
    writer.stageNew(join(scope, 'c.json'), Buffer.from('{"c":1}')),
    writer.stageNew(join(scope, 'd.json'), Buffer.from('{"d":1}'))
  ])
  assert.equal(there, null, 'the name exists: nothing staged')
  assert.deepEqual(await readdir(scope), ['there.json'], 'staged, nothing under a name yet')
  for (const staged of [a, fresh, taken, dropped]) assert.equal((await readFile(staged!.temp)).byteLength > 0 && staged!.temp.startsWith(temps + '/'), true, 'in the temp folder')
  await writeFile(join(scope, 'c.json'), 'someone else') // between the halves
  const published = await Promise.all([
    writer.publish(a!, join(scope, 'a.json')),
    writer.publish(fresh!, join(dir, 'new-scope', 'b.json')),
    writer.publish(taken!, join(scope, 'c.json')),
    writer.publish(dropped!, null)
  ])
  assert.deepEqual(published.map((p) => p.written), [true, true, false, false])
  assert.equal(await readFile(join(scope, 'a.json'), 'utf8'), '{"a":1}')
  assert.equal((await fileMtimeMs(join(scope, 'a.json'))), a!.mtimeMs, 'the mtime the index recorded before the name appeared')
  assert.equal(await readFile(join(dir, 'new-scope', 'b.json'), 'utf8'), '{"b":1}', 'a missing folder is made')
  assert.equal(await readFile(join(scope, 'c.json'), 'utf8'), 'someone else', 'never over a name taken meanwhile')
  assert.deepEqual((await readdir(scope)).sort(), ['a.json', 'c.json', 'there.json'])
  for (const staged of [a, fresh, taken, dropped]) await assert.rejects(stat(staged!.temp), { code: 'ENOENT' }, 'every staged temp removed')
})

test('replaceBlocks writes each block whole over whatever its name holds, the same size too, and leaves no temp', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter()
  t.after(async () => { await writer.close() })
  const a = join(dir, 'AB', 'a.data')
  await writer.replaceBlocks([{ path: a, bytes: Buffer.from('aaaa') }]) // its folder made
  assert.equal(await readFile(a, 'utf8'), 'aaaa')
  await writeFile(a, 'a\0\0\0') // torn by a crash, the same size
  await writer.replaceBlocks([{ path: a, bytes: Buffer.from('aaaa') }])
  assert.equal(await readFile(a, 'utf8'), 'aaaa')
  assert.deepEqual(await readdir(join(dir, 'AB')), ['a.data'], 'no temp left behind')
  await writeFile(join(dir, 'plain'), 'x')
  await assert.rejects(writer.replaceBlocks([{ path: join(dir, 'plain', 'b.data'), bytes: Buffer.from('b') }]), { code: 'ENOTDIR' })
})

test('blocks given up (move) go to the thread without a copy: a whole buffer is detached here, a view of a larger one copied; moveFiles and removeFiles in one request each', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter()
  t.after(async () => { await writer.close() })
  const whole = new Uint8Array(Buffer.from('whole block'))
  const larger = Buffer.from('a view of a larger buffer')
  const view = larger.subarray(2, 6)
  const kept = new Uint8Array(Buffer.from('kept block'))
  await writer.writeBlocks([{ path: join(dir, 'AA', 'w.data'), bytes: whole }, { path: join(dir, 'AA', 'v.data'), bytes: view }], { move: true })
  await writer.writeBlocks([{ path: join(dir, 'AA', 'k.data'), bytes: kept }])
  assert.equal(whole.byteLength, 0, 'moved: its buffer is the thread\'s now')
  assert.equal(Buffer.from(view).toString(), 'view', 'copied: the larger buffer is not given away')
  assert.equal(Buffer.from(kept).toString(), 'kept block', 'not moved without `move`')
  assert.equal(await readFile(join(dir, 'AA', 'w.data'), 'utf8'), 'whole block')
  assert.equal(await readFile(join(dir, 'AA', 'v.data'), 'utf8'), 'view')
  await writer.moveFiles([{ from: join(dir, 'AA', 'w.data'), to: join(dir, 'BB', 'w.data') }, { from: join(dir, 'AA', 'v.data'), to: join(dir, 'AA', 'v2.data') }])
  assert.deepEqual(await readdir(join(dir, 'AA')), ['k.data', 'v2.data'])
  assert.equal(await readFile(join(dir, 'BB', 'w.data'), 'utf8'), 'whole block', 'its folder made')
  await writer.removeFiles([join(dir, 'AA', 'k.data'), join(dir, 'AA', 'gone.data')])
  assert.deepEqual(await readdir(join(dir, 'AA')), ['v2.data'], 'one already gone is no error')
})

test('a create asked for with an mtime gets exactly that mtime before its name appears, on the thread and while it starts, so its record can be written first', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter({ tempDir: join(dir, '.writing'), spares: 2 })
  t.after(async () => { await writer.close() })
  const when = Date.now() - 12_345
  // the first runs on this thread (the writer thread is starting), the others on the thread, a spare among them
  const first = await writer.createNew(join(dir, 'scope', 'first.json'), Buffer.from('{"n":1}'), { mtimeMs: when })
  await new Promise((resolve) => setTimeout(resolve, 500))
  const made = await Promise.all(Array.from({ length: 5 }, async (_, i) => await writer.createNew(join(dir, 'scope', `${i}.json`), Buffer.from(`{"n":${i}}`), { mtimeMs: when + i })))
  const staged = await writer.stageNew(join(dir, 'scope', 'staged.json'), Buffer.from('{}'), { mtimeMs: when + 99 })
  for (const [i, w] of [first, ...made].entries()) {
    const name = i === 0 ? 'first.json' : `${i - 1}.json`
    const expected = i === 0 ? when : when + i - 1
    assert.equal(w.written, true)
    assert.equal(w.mtimeMs, expected, `${name}: the mtime asked for`)
    assert.equal((await fileMtimeMs(join(dir, 'scope', name))), expected, `${name}: what a later stat (the start-up scan) sees`)
  }
  assert.equal(staged!.mtimeMs, when + 99)
  assert.equal((await writer.publish(staged!, join(dir, 'scope', 'staged.json'))).written, true)
  assert.equal((await fileMtimeMs(join(dir, 'scope', 'staged.json'))), when + 99)
})

test('the writer thread runs at a lower priority than the main thread (10 steps below the niceness it started with, as far as 19), so waking it does not preempt request handling on two cores', { skip: process.platform !== 'linux' }, async (t) => {
  const dir = await tempDir(t)
  const niceness = async (tid: string): Promise<number> => Number((await readFile(`/proc/self/task/${tid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[16])
  // the niceness this test runs at (`nice npm test` runs it at 10, systemd's Nice= at another)
  const own = await niceness(String(process.pid))
  const expected = Math.min(19, own + 10)
  const writer = createFileWriter({ tempDir: join(dir, '.writing') })
  t.after(async () => { await writer.close() })
  const before = new Set(await readdir('/proc/self/task'))
  await writer.createNew(join(dir, 'a.json'), Buffer.from('{}')) // starts the thread
  let found: number[] = []
  for (let i = 0; i < 200 && !found.includes(expected); i++) {
    const started = (await readdir('/proc/self/task')).filter((tid) => !before.has(tid))
    found = await Promise.all(started.map(async (tid) => await niceness(tid).catch(() => own)))
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  assert.ok(found.includes(expected), `a thread started by the writer runs at niceness ${expected}, 10 below the process's ${own} (${found.join(', ')})`)
  assert.equal(await niceness(String(process.pid)), own, 'the main thread keeps its own')
})

test('spares never make the temp folder\'s parent again: a data folder removed while the thread starts stays removed', async (t) => {
  const dir = await tempDir(t)
  const writer = createFileWriter({ tempDir: join(dir, '.writing'), spares: 4 })
  t.after(async () => { await writer.close() })
  // runs on this thread while the writer's thread starts; that thread makes its spares once it is up
  await writer.createNew(join(dir, 'scope', 'a.json'), Buffer.from('{}'))
  await rm(dir, { recursive: true, force: true })
  await new Promise((resolve) => setTimeout(resolve, 500))
  await assert.rejects(stat(dir), { code: 'ENOENT' }, 'the removed folder was not made again for spares')
})
