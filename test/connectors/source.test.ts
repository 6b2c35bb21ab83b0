import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { crc32 } from 'node:zlib'
import { isHearthError } from '../../src/errors.js'
import { openExport } from '../../src/connectors/source.js'
import { tempDir } from '../support/tmp.js'
import { craftZip } from './fixtures/craft-zip.js'
import { EXPORT_TIME, writeBothExports, writeFolderExport, writeZipExport, zipBytes } from './fixtures/exports.js'

const FILES = {
  'export-root/data/a.json': { a: 1 },
  'export-root/b.json': '\ufeff{"b": "bé 東京 🌸"}',
  'export-root/deep/er/a.json': [1, 2],
  'export-root/media/photo.jpg': new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 3]),
  '__MACOSX/export-root/._b.json': 'resource fork',
  'export-root/.DS_Store': 'finder noise'
}

const isCode = (code: string) => (err: unknown) => isHearthError(err) && err.code === code

test('source: a zip and the folder unzipped from it list the same entries, times and bytes', async (t) => {
  const dir = await tempDir(t)
  const newer = new Date('2024-06-01T08:00:00Z')
  const { zip, folder } = await writeBothExports(dir, 'export', FILES, { times: { 'export-root/deep/er/a.json': newer } })
  const z = await openExport(zip)
  const f = await openExport(folder)
  t.after(async () => { await z.close(); await f.close() })
  assert.equal(z.kind, 'zip')
  assert.equal(f.kind, 'folder')
  assert.deepEqual(z.entries().map((e) => e.path), ['export-root/b.json', 'export-root/data/a.json', 'export-root/deep/er/a.json', 'export-root/media/photo.jpg'], 'no __MACOSX or .DS_Store noise, sorted')
  assert.deepEqual(f.entries().map((e) => [e.path, e.size, e.modifiedAt?.getTime()]), z.entries().map((e) => [e.path, e.size, e.modifiedAt?.getTime()]))
  assert.equal(z.exportedAt, '2024-06-01T08:00:00Z', 'the newest entry time')
  assert.equal(f.exportedAt, z.exportedAt)

  for (const s of [z, f]) {
    assert.deepEqual(s.find('a.json').map((e) => e.path), ['export-root/data/a.json', 'export-root/deep/er/a.json'], 'shallowest first')
    assert.deepEqual(s.find('data/a.json').map((e) => e.path), ['export-root/data/a.json'])
    assert.deepEqual(s.find('ta/a.json'), [], 'a string matches whole path segments only')
    assert.deepEqual(s.find(/\.jpg$/).map((e) => e.path), ['export-root/media/photo.jpg'])
    assert.deepEqual(await s.readJson('export-root/b.json'), { b: 'bé 東京 🌸' }, 'byte-order mark dropped')
    assert.equal(await s.readText('export-root/b.json'), '{"b": "bé 東京 🌸"}')
    assert.deepEqual([...await s.readBytes('export-root/media/photo.jpg')], [0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 3])
    await assert.rejects(s.readBytes('export-root/nope.json'), isCode('NOT_FOUND'))
    await assert.rejects(s.readBytes('__MACOSX/export-root/._b.json'), isCode('NOT_FOUND'), 'noise is not readable either')
  }
})

test('source: a lone JSON file is an export with one entry', async (t) => {
  const dir = await tempDir(t)
  const file = join(dir, 'conversations.json')
  await writeFile(file, '[]')
  await utimes(file, EXPORT_TIME, EXPORT_TIME)
  const s = await openExport(file)
  assert.equal(s.kind, 'file')
  assert.deepEqual(s.find('conversations.json').map((e) => e.path), ['conversations.json'])
  assert.deepEqual(await s.readJson('conversations.json'), [])
  assert.equal(s.exportedAt, '2024-05-04T10:20:30Z')
  await s.close()
})

test('source: entries without a real time fall back to the archive mtime', async (t) => {
  const dir = await tempDir(t)
  const zip = await writeZipExport(dir, 'old.zip', { 'a.json': '{}' }, { mtime: new Date(1980, 0, 1, 0, 0, 0) })
  const fileTime = new Date('2023-03-03T03:03:03Z')
  await utimes(zip, fileTime, fileTime)
  const s = await openExport(zip)
  assert.equal(s.exportedAt, '2023-03-03T03:03:03Z')
  await s.close()
})

test('source: a folder skips symlinks, so nothing outside it can be read', async (t) => {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'secret.json'), '{"secret": true}')
  const folder = await writeFolderExport(dir, 'export', { 'a.json': '{}' })
  await symlink(join(dir, 'secret.json'), join(folder, 'link.json'))
  await mkdir(join(dir, 'outside'))
  await symlink(join(dir, 'outside'), join(folder, 'linkdir'))
  const s = await openExport(folder)
  assert.deepEqual(s.entries().map((e) => e.path), ['a.json'])
  await assert.rejects(s.readBytes('link.json'), isCode('NOT_FOUND'))
  await assert.rejects(s.readBytes('../secret.json'), isCode('NOT_FOUND'))
})

test('source: missing paths, non-zips and damaged zips fail with clear codes', async (t) => {
  const dir = await tempDir(t)
  await assert.rejects(openExport(join(dir, 'nope.zip')), isCode('NOT_FOUND'))

  const notZip = join(dir, 'export.zip')
  await writeFile(notZip, 'this is a text file that someone renamed to .zip\n'.repeat(100))
  await assert.rejects(openExport(notZip), (err) => isCode('EXPORT_UNREADABLE')(err) && /not a readable zip archive: no end-of-central-directory/.test((err as Error).message))

  const empty = join(dir, 'empty.zip')
  await writeFile(empty, '')
  await assert.rejects(openExport(empty), isCode('EXPORT_UNREADABLE'))

  const good = zipBytes({ 'conversations.json': JSON.stringify([{ id: 'x', text: 'y'.repeat(5000) }]) })
  const truncated = join(dir, 'truncated.zip')
  await writeFile(truncated, good.subarray(0, good.length - 30))
  await assert.rejects(openExport(truncated), isCode('EXPORT_UNREADABLE'), 'a download cut short')

  const cutMiddle = join(dir, 'cut-middle.zip')
  const tail = good.subarray(good.length - 200)
  await writeFile(cutMiddle, Buffer.concat([good.subarray(0, 40), tail]))
  await assert.rejects(openExport(cutMiddle), isCode('EXPORT_UNREADABLE'))

  // damaged compressed bytes: the directory still lists the entry, reading it fails
  const flipped = Buffer.from(good)
  for (let i = 60; i < 80; i++) flipped[i] = flipped[i]! ^ 0xff
  const damaged = join(dir, 'damaged.zip')
  await writeFile(damaged, flipped)
  const s = await openExport(damaged)
  assert.deepEqual(s.entries().map((e) => e.path), ['conversations.json'])
  await assert.rejects(s.readJson('conversations.json'), (err) => isCode('EXPORT_UNREADABLE')(err) && /conversations\.json/.test((err as Error).message))
  await s.close()

  const text = join(dir, 'notes.txt')
  await writeFile(text, 'hello')
  await assert.rejects(openExport(text), isCode('EXPORT_UNREADABLE'))

  const badJson = await writeZipExport(dir, 'bad-json.zip', { 'a.json': '{"a": ' })
  const b = await openExport(badJson)
  await assert.rejects(b.readJson('a.json'), (err) => isCode('EXPORT_UNREADABLE')(err) && /a\.json .* is not valid JSON/.test((err as Error).message))
  await b.close()
})

/** Offsets of the first central directory header, from the end record. */
function centralDirectoryOffset (zip: Uint8Array): number {
  const buf = Buffer.from(zip)
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  return buf.readUInt32LE(eocd + 16)
}

test('zip: encrypted entries and unsupported compression methods are refused by name', async (t) => {
  const dir = await tempDir(t)
  const bytes = Buffer.from(zipBytes({ 'secret.json': '{"a": 1}' }))
  const cd = centralDirectoryOffset(bytes)

  const encrypted = Buffer.from(bytes)
  encrypted.writeUInt16LE(encrypted.readUInt16LE(cd + 8) | 1, cd + 8)
  await writeFile(join(dir, 'enc.zip'), encrypted)
  const e = await openExport(join(dir, 'enc.zip'))
  await assert.rejects(e.readBytes('secret.json'), (err) => isCode('EXPORT_UNREADABLE')(err) && /secret\.json is encrypted/.test((err as Error).message))
  await e.close()

  const bzip2 = Buffer.from(bytes)
  bzip2.writeUInt16LE(12, cd + 10)
  await writeFile(join(dir, 'bz.zip'), bzip2)
  const b = await openExport(join(dir, 'bz.zip'))
  await assert.rejects(b.readBytes('secret.json'), (err) => isCode('EXPORT_UNREADABLE')(err) && /compression method 12/.test((err as Error).message))
  await b.close()
})

test('zip: the extended-timestamp field gives the exact UTC time', async (t) => {
  const dir = await tempDir(t)
  const exact = Date.UTC(2024, 6, 7, 8, 9, 11) / 1000 // odd second: a DOS time could not hold it
  const ut = Buffer.alloc(5)
  ut.writeUInt8(1, 0)
  ut.writeInt32LE(exact, 1)
  const path = join(dir, 'ut.zip')
  const { zipSync } = await import('fflate')
  await writeFile(path, zipSync({ 'a.json': [Buffer.from('{}'), { mtime: new Date(2000, 0, 1), extra: { 0x5455: ut } }] }))
  const s = await openExport(path)
  assert.equal(s.entries()[0]!.modifiedAt?.toISOString(), '2024-07-07T08:09:11.000Z')
  assert.equal(s.exportedAt, '2024-07-07T08:09:11Z')
  await s.close()
})

/** A ZIP64 archive with one stored entry, every size and offset in the ZIP64 fields. */
function zip64Bytes (name: string, data: Buffer): Buffer {
  const nameBytes = Buffer.from(name)
  const crc = crc32(data) >>> 0
  const local = Buffer.alloc(30 + nameBytes.length + 20)
  local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(45, 4); local.writeUInt16LE(0x800, 6); local.writeUInt16LE(0, 8)
  local.writeUInt16LE(0, 10); local.writeUInt16LE(0x5821, 12); local.writeUInt32LE(crc, 14)
  local.writeUInt32LE(0xffffffff, 18); local.writeUInt32LE(0xffffffff, 22); local.writeUInt16LE(nameBytes.length, 26); local.writeUInt16LE(20, 28)
  nameBytes.copy(local, 30)
  const le = 30 + nameBytes.length
  local.writeUInt16LE(1, le); local.writeUInt16LE(16, le + 2); local.writeBigUInt64LE(BigInt(data.length), le + 4); local.writeBigUInt64LE(BigInt(data.length), le + 12)
  const cdOffset = local.length + data.length
  const central = Buffer.alloc(46 + nameBytes.length + 28)
  central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(45, 4); central.writeUInt16LE(45, 6); central.writeUInt16LE(0x800, 8)
  central.writeUInt16LE(0, 10); central.writeUInt16LE(0, 12); central.writeUInt16LE(0x5821, 14); central.writeUInt32LE(crc, 16)
  central.writeUInt32LE(0xffffffff, 20); central.writeUInt32LE(0xffffffff, 24); central.writeUInt16LE(nameBytes.length, 28); central.writeUInt16LE(28, 30)
  central.writeUInt32LE(0xffffffff, 42)
  nameBytes.copy(central, 46)
  const ce = 46 + nameBytes.length
  central.writeUInt16LE(1, ce); central.writeUInt16LE(24, ce + 2)
  central.writeBigUInt64LE(BigInt(data.length), ce + 4); central.writeBigUInt64LE(BigInt(data.length), ce + 12); central.writeBigUInt64LE(0n, ce + 20)
  const z64Offset = cdOffset + central.length
  const z64 = Buffer.alloc(56)
  z64.writeUInt32LE(0x06064b50, 0); z64.writeBigUInt64LE(44n, 4); z64.writeUInt16LE(45, 12); z64.writeUInt16LE(45, 14)
  z64.writeBigUInt64LE(1n, 24); z64.writeBigUInt64LE(1n, 32); z64.writeBigUInt64LE(BigInt(central.length), 40); z64.writeBigUInt64LE(BigInt(cdOffset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0); locator.writeBigUInt64LE(BigInt(z64Offset), 8); locator.writeUInt32LE(1, 16)
  const eocd = Buffer.alloc(22)
  eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(0xffff, 8); eocd.writeUInt16LE(0xffff, 10)
  eocd.writeUInt32LE(0xffffffff, 12); eocd.writeUInt32LE(0xffffffff, 16)
  return Buffer.concat([local, data, central, z64, locator, eocd])
}

test('zip: ZIP64 archives (exports over 4 GB use them) are read', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'z64.zip')
  await writeFile(path, zip64Bytes('Spotify Account Data/YourLibrary.json', Buffer.from('{"tracks": []}')))
  const zip = await openExport(path)
  assert.equal(zip.entries().length, 1)
  assert.equal(zip.entries()[0]!.size, 14)
  assert.equal(zip.entries()[0]!.modifiedAt?.getFullYear(), 2024)
  assert.deepEqual(await zip.readJson('Spotify Account Data/YourLibrary.json'), { tracks: [] })
  await zip.close()
})

test('zip: an archive written by Info-ZIP (extra fields, directory entries) reads like its folder', async (t) => {
  if (spawnSync('zip', ['-v']).status !== 0) { t.skip('the zip tool is not installed'); return }
  const dir = await tempDir(t)
  const folder = await writeFolderExport(dir, 'ig', { 'personal_information/personal_information.json': '{"profile_user": []}', 'media/a.jpg': new Uint8Array(1000).fill(7) })
  const r = spawnSync('zip', ['-r', '-q', join(dir, 'ig.zip'), '.'], { cwd: folder })
  assert.equal(r.status, 0, r.stderr.toString())
  const z = await openExport(join(dir, 'ig.zip'))
  const f = await openExport(folder)
  assert.deepEqual(z.entries().map((e) => [e.path, e.size, e.modifiedAt?.getTime()]), f.entries().map((e) => [e.path, e.size, e.modifiedAt?.getTime()]))
  assert.equal(z.exportedAt, f.exportedAt)
  assert.ok(Buffer.from(await z.readBytes('media/a.jpg')).equals(await readFile(join(folder, 'media/a.jpg'))))
  await z.close()
})

test('zip: a zip bomb that declares 100 bytes is stopped at 100 bytes with EXPORT_TOO_LARGE', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'bomb.zip')
  // 64 MiB of zeros deflate to ~64 KB; the headers claim 100 bytes
  await writeFile(path, craftZip([{ name: 'conversations.json', data: Buffer.alloc(64 * 1024 * 1024), declaredSize: 100 }, { name: 'ok.json', data: Buffer.from('[1]') }]))
  const s = await openExport(path)
  const rss0 = process.memoryUsage().rss
  await assert.rejects(s.readJson('conversations.json'), (err) => isCode('EXPORT_TOO_LARGE')(err) && /inflates past the 100 bytes it declares/.test((err as Error).message))
  await assert.rejects(async () => { for await (const _ of s.streamJson('conversations.json')) { /* nothing */ } }, isCode('EXPORT_TOO_LARGE'))
  assert.ok(process.memoryUsage().rss - rss0 < 48 * 1024 * 1024, 'nothing near the 64 MiB was inflated')
  assert.deepEqual(await s.readJson('ok.json'), [1], 'the archive stays readable')
  await s.close()
})

test('zip: an entry declaring more than the global limit is refused before inflating', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'huge.zip')
  await writeFile(path, craftZip([{ name: 'a.json', data: Buffer.from('[]'), declaredSize: 0xfffffff0 }]))
  const s = await openExport(path)
  await assert.rejects(s.readBytes('a.json'), (err) => isCode('EXPORT_TOO_LARGE')(err) && /more than the 536870912/.test((err as Error).message))
  await s.close()
})

test('zip: names that climb out with ../ or are absolute are refused and listed, the rest is read', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'evil.zip')
  await writeFile(path, craftZip([
    { name: '../../.bashrc', data: Buffer.from('evil') },
    { name: 'ok/../../escape.json', data: Buffer.from('{}') },
    { name: '/etc/passwd', data: Buffer.from('x') },
    { name: 'conversations.json', data: Buffer.from('[]') }
  ]))
  const s = await openExport(path)
  assert.deepEqual(s.entries().map((e) => e.path), ['conversations.json'])
  assert.deepEqual(s.refused().map((r) => r.path), ['../../.bashrc', 'ok/../../escape.json', '/etc/passwd'])
  assert.ok(s.refused().every((r) => /points outside the export/.test(r.reason)))
  await assert.rejects(s.readBytes('../../.bashrc'), isCode('NOT_FOUND'))
  await s.close()
})

test('zip: entry names are decoded as the encoding flag says (UTF-8 with bit 11, CP437 without)', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'names.zip')
  await writeFile(path, craftZip([
    { name: 'messages/inbox/café_1/message_1.json', data: Buffer.from('{}') },
    // "Müller.json" as an old Windows tool writes it: CP437 ü = 0x81, no UTF-8 flag
    { name: Buffer.concat([Buffer.from('M'), Buffer.from([0x81]), Buffer.from('ller.json')]), data: Buffer.from('{}'), utf8Flag: false }
  ]))
  const s = await openExport(path)
  assert.deepEqual(s.entries().map((e) => e.path), ['Müller.json', 'messages/inbox/café_1/message_1.json'])
  assert.deepEqual(await s.readJson('Müller.json'), {})
  await s.close()
})

test('source: several archives of one export read as one tree; a folder of them too; a repeated path is read from the first', async (t) => {
  const dir = await tempDir(t)
  await mkdir(join(dir, 'parts'))
  const a = await writeZipExport(join(dir, 'parts'), 'export-part1.zip', { 'index.json': { part: 1 }, 'a/1.json': [1] }, { mtime: new Date('2024-05-01T00:00:00Z') })
  const b = await writeZipExport(join(dir, 'parts'), 'export-part2.zip', { 'index.json': { part: 2 }, 'b/2.json': [2] })
  const s = await openExport([a, b])
  assert.equal(s.kind, 'parts')
  assert.deepEqual(s.parts().map((p) => p.location), [a, b])
  assert.deepEqual(s.entries().map((e) => e.path), ['a/1.json', 'b/2.json', 'index.json'])
  assert.deepEqual(await s.readJson('index.json'), { part: 1 })
  assert.deepEqual(await s.readJson('b/2.json'), [2])
  assert.deepEqual(s.refused(), [{ path: 'export-part2.zip:index.json', reason: 'also in export-part1.zip; that copy is used' }])
  assert.equal(s.exportedAt, EXPORT_TIME.toISOString().replace('.000Z', 'Z'), 'the newest part dates the export')
  assert.deepEqual([...s.opened()].sort(), ['b/2.json', 'index.json'])
  await s.close()

  const folder = await openExport(join(dir, 'parts'))
  assert.equal(folder.kind, 'parts')
  assert.deepEqual(folder.entries().map((e) => e.path), ['a/1.json', 'b/2.json', 'index.json'])
  await folder.close()
})

test('source: streamJson yields a large array element by element, from a zip and from a file, and names invalid JSON', async (t) => {
  const dir = await tempDir(t)
  const list = Array.from({ length: 2000 }, (_, i) => ({ id: `c${i}`, text: 'ü'.repeat(i % 50) }))
  const { zip, folder } = await writeBothExports(dir, 'big', { 'conversations.json': '\ufeff' + JSON.stringify(list), 'bad.json': '[{"a": 1}, {"b": ' })
  for (const location of [zip, folder]) {
    const s = await openExport(location)
    const seen: unknown[] = []
    for await (const v of s.streamJson('conversations.json')) seen.push(v)
    assert.deepEqual(seen, list)
    const partial: unknown[] = []
    await assert.rejects(async () => { for await (const v of s.streamJson('bad.json')) partial.push(v) },
      (err) => isCode('EXPORT_UNREADABLE')(err) && /bad\.json .* is not valid JSON/.test((err as Error).message))
    assert.deepEqual(partial, [{ a: 1 }])
    await s.close()
  }
})
