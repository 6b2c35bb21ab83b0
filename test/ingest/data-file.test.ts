import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, open, symlink, writeFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { readDataFile } from '../../src/ingest/data-file.js'
import { removeStaleTemps, writeNewFile, writingFolder } from '../../src/ingest/atomic-write.js'
import { isHearthError } from '../../src/errors.js'
import { tempDir } from '../support/tmp.js'

async function dataFolder (t: Parameters<typeof tempDir>[0]): Promise<string> {
  const data = join(await tempDir(t, 'hearth-datafile-'), 'data')
  await mkdir(join(data, 'instagram.profile'), { recursive: true })
  return data
}

test('readDataFile refuses FIFOs, directly and behind a symlink, without blocking', async (t) => {
  const data = await dataFolder(t)
  execFileSync('mkfifo', [join(data, 'instagram.profile', '.pipe')])
  await symlink('.pipe', join(data, 'instagram.profile', 'linked.json'))
  for (const rel of ['instagram.profile/.pipe', 'instagram.profile/linked.json']) {
    await assert.rejects(readDataFile(data, rel, { maxBytes: 1024 }), (err) => isHearthError(err, 'FILE_UNREADABLE') && /not a regular file/.test(err.message))
  }
})

test('readDataFile rejects a file over the limit from its size alone (a sparse 1 GB file is never read)', async (t) => {
  const data = await dataFolder(t)
  const fh = await open(join(data, 'instagram.profile', 'huge.json'), 'w')
  await fh.truncate(1024 ** 3)
  await fh.close()
  const rss = process.memoryUsage().rss
  await assert.rejects(readDataFile(data, 'instagram.profile/huge.json', { maxBytes: 16 * 1024 * 1024 }),
    (err) => isHearthError(err, 'FILE_TOO_LARGE') && err.status === 413 && err.details?.maxBytes === 16 * 1024 * 1024)
  assert.ok(process.memoryUsage().rss - rss < 64 * 1024 * 1024)
  await writeFile(join(data, 'instagram.profile', 'ok.json'), '{"a":1}')
  const read = await readDataFile(data, 'instagram.profile/ok.json', { maxBytes: 7 })
  assert.equal(Buffer.from(read.bytes).toString(), '{"a":1}')
  await assert.rejects(readDataFile(data, 'instagram.profile/ok.json', { maxBytes: 6 }), (err) => isHearthError(err, 'FILE_TOO_LARGE'))
})

test('readDataFile refuses links that leave the data folder', async (t) => {
  const data = await dataFolder(t)
  await writeFile(join(data, '..', 'secret.json'), '{}')
  await symlink(join(data, '..', 'secret.json'), join(data, 'instagram.profile', 'escape.json'))
  await assert.rejects(readDataFile(data, 'instagram.profile/escape.json', { maxBytes: 1024 }), (err) => isHearthError(err, 'PATH_OUTSIDE_DATA'))
})

test('removeStaleTemps removes only the temps of unfinished writes; a failed write leaves none', async (t) => {
  const data = await dataFolder(t)
  const scopeDir = join(data, 'instagram.profile')
  await writeFile(join(scopeDir, '.2026-01-01T00-00-00.000Z.json.0123456789ab.tmp'), 'plaintext')
  await writeFile(join(scopeDir, '.user-notes.tmp'), 'not ours')
  await writeFile(join(scopeDir, '2026-01-01T00-00-00.000Z.json'), '{}')
  await mkdir(writingFolder(data))
  await writeFile(join(writingFolder(data), '.2026-01-01T00-00-01.000Z.json.0123456789ab.tmp'), 'plaintext')
  assert.equal(await removeStaleTemps(data), 2)
  assert.deepEqual((await readdir(scopeDir)).sort(), ['.user-notes.tmp', '2026-01-01T00-00-00.000Z.json'])
  assert.deepEqual(await readdir(writingFolder(data)), [], 'the unwatched temps of the file writer too')
  assert.equal(await removeStaleTemps(join(data, 'nothing-here')), 0)

  // a write that finds its name taken leaves no temp behind either (ENOSPC: test/daemon/disk-full)
  assert.equal((await writeNewFile(join(scopeDir, 'new.json'), Buffer.from('{}'))).written, true)
  assert.equal((await writeNewFile(join(scopeDir, 'new.json'), Buffer.from('{}'))).written, false)
  assert.deepEqual((await readdir(scopeDir)).filter((n) => n.endsWith('.tmp')), ['.user-notes.tmp'])
})
