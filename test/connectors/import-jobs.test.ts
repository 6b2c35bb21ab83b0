// Imports over HTTP (the dashboard's path): an export sent in parts is uploaded as its first
// archive, then each further part; the worker process reads them as one tree.
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { createImportJobs, type ImportJob } from '../../src/connectors/import-jobs.js'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { zipBytes } from './fixtures/exports.js'
import { takeout } from './fixtures/google-maps.js'
import { categoryFiles } from './fixtures/instagram.js'
import { PLUGINS_DIR, SCHEMAS_DIR } from './fixtures/run.js'

async function until (job: () => ImportJob | null, states: string[]): Promise<ImportJob> {
  for (let i = 0; i < 600; i++) {
    const j = job()
    if (j !== null && states.includes(j.state)) return j
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`the job never reached ${states.join('/')}: ${JSON.stringify(job())}`)
}

test('import jobs: a second part is added to an uploaded export, and the import reads both', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const jobs = createImportJobs({ dir: join(dir, 'imports'), connectorDirs: [PLUGINS_DIR], socketPath: server.socketPath, logger: silentLogger(), maxBytes: 10 * 1024 * 1024 })
  await jobs.start()
  t.after(async () => { await jobs.stop() })
  const part1 = zipBytes(categoryFiles('2025', { followers: [['friend.one', 1717000000]] }))
  const part2 = zipBytes(categoryFiles('2025', { following: [['café.tokyo', 1717000100]] }))
  const meta = (name: string, bytes: Uint8Array): { name: string; declaredBytes: number; modifiedAt: null } => ({ name, declaredBytes: bytes.length, modifiedAt: null })

  const uploaded = await jobs.upload(Readable.from([Buffer.from(part1)]), meta('instagram-part1.zip', part1))
  await until(() => jobs.get(uploaded.id), ['ready'])
  const added = await jobs.addPart(uploaded.id, Readable.from([Buffer.from(part2)]), meta('instagram-part2.zip', part2))
  assert.deepEqual(added.parts, ['instagram-part1.zip', 'instagram-part2.zip'])
  assert.equal(added.size, part1.length + part2.length)
  const probed = await until(() => jobs.get(uploaded.id), ['ready', 'failed'])
  assert.equal(probed.state, 'ready', JSON.stringify(probed.error))
  assert.equal(probed.entries, 2, 'both parts were looked at')

  jobs.run(uploaded.id, 'instagram')
  const done = await until(() => jobs.get(uploaded.id), ['done', 'failed'])
  assert.equal(done.state, 'done', JSON.stringify(done.error))
  assert.equal(done.summary?.source.parts?.length, 2)
  assert.deepEqual(done.summary?.scopes.filter((s) => s.stored > 0).map((s) => s.scope), ['instagram.followers', 'instagram.following'])

  await assert.rejects(jobs.addPart(uploaded.id, Readable.from([Buffer.from(part2)]), meta('late.zip', part2)), (err) => isHearthError(err, 'CONFLICT'))
  await assert.rejects(jobs.addPart('nope', Readable.from([Buffer.from(part2)]), meta('x.zip', part2)), (err) => isHearthError(err, 'NOT_FOUND'))
})

test('import jobs: an optional scope is imported only when the start names it in `with`', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const jobs = createImportJobs({ dir: join(dir, 'imports'), connectorDirs: [PLUGINS_DIR], socketPath: server.socketPath, logger: silentLogger(), maxBytes: 10 * 1024 * 1024 })
  await jobs.start()
  t.after(async () => { await jobs.stop() })
  const zip = zipBytes(takeout('2022'))
  const stored = async (include?: string[]): Promise<Array<[string, number]>> => {
    const job = await jobs.upload(Readable.from([Buffer.from(zip)]), { name: 'takeout.zip', declaredBytes: zip.length, modifiedAt: null })
    await until(() => jobs.get(job.id), ['ready'])
    jobs.run(job.id, 'google-maps', include)
    const done = await until(() => jobs.get(job.id), ['done', 'failed'])
    assert.equal(done.state, 'done', JSON.stringify(done.error))
    return done.summary!.scopes.map((s) => [s.scope, s.stored + s.duplicate])
  }
  assert.deepEqual(await stored(), [['googlemaps.visits', 2], ['googlemaps.activities', 1], ['googlemaps.locations', 0]])
  assert.deepEqual(await stored(['googlemaps.locations']), [['googlemaps.visits', 2], ['googlemaps.activities', 1], ['googlemaps.locations', 2]])
})

test('import jobs: unstarted uploads are bounded in number and removed when the daemon stops', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const jobs = createImportJobs({ dir: join(dir, 'imports'), connectorDirs: [PLUGINS_DIR], socketPath: server.socketPath, logger: silentLogger(), maxBytes: 10 * 1024 * 1024 })
  await jobs.start()
  t.after(async () => { await jobs.stop() })
  const zip = zipBytes(categoryFiles('2025', { followers: [['friend.one', 1717000000]] }))
  const uploaded: ImportJob[] = []
  for (let i = 0; i < 4; i++) {
    const job = await jobs.upload(Readable.from([Buffer.from(zip)]), { name: `export-${i}.zip`, declaredBytes: zip.length, modifiedAt: null })
    uploaded.push(await until(() => jobs.get(job.id), ['ready', 'failed']))
  }
  // the fourth waiting upload pushed out the first, and its archive is gone from disk
  const first = jobs.get(uploaded[0]!.id)!
  assert.equal(first.state, 'failed')
  assert.match(first.error?.message ?? '', /removed unstarted: 3 newer uploads wait to be started/)
  assert.deepEqual((await readdir(join(dir, 'imports'))).sort(), uploaded.slice(1).map((j) => j.id).sort())
  await jobs.stop()
  assert.deepEqual(await readdir(join(dir, 'imports')), [], 'no upload outlives the daemon')
})
