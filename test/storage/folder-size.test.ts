import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { folderSize } from '../../src/storage/folder-size.js'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import { tempDir } from '../support/tmp.js'

test('a folder\'s size is measured in the background, at most once per max age, and a missing folder is 0', async (t) => {
  const dir = await tempDir(t, 'hearth-size-')
  await mkdir(join(dir, 'a', 'b'), { recursive: true })
  await writeFile(join(dir, 'a', 'one'), Buffer.alloc(1000))
  await writeFile(join(dir, 'a', 'b', 'two'), Buffer.alloc(234))
  let clock = 0
  const size = folderSize(dir, { maxAgeMs: 100, now: () => clock })
  assert.equal(size.current(), null, 'nothing known before the first walk ends')
  await size.settled()
  assert.equal(size.current(), 1234)
  await writeFile(join(dir, 'three'), Buffer.alloc(6))
  assert.equal(size.current(), 1234, 'a fresh figure is not measured again')
  await size.settled()
  clock = 100
  size.current()
  await size.settled()
  assert.equal(size.current(), 1240)
  const missing = folderSize(join(dir, 'nope'))
  missing.current()
  await missing.settled()
  assert.equal(missing.current(), 0)
  const both = folderSize([join(dir, 'a'), join(dir, 'nope')])
  both.current()
  await both.settled()
  assert.equal(both.current(), 1234, 'several folders are summed (a missing one counts 0)')
})

test('the embedded backend reports the bytes its blocks take (small ones in its LevelDB)', async (t) => {
  const dir = await tempDir(t, 'hearth-size-')
  const s = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await s.stop() })
  await s.add(randomBytes(5000))
  let bytes: number | null | undefined = null
  for (let i = 0; i < 50 && (bytes === null || bytes === undefined); i++) {
    bytes = (await s.health()).bytes
    if (bytes === null) await new Promise((r) => setTimeout(r, 20))
  }
  assert.ok(typeof bytes === 'number' && bytes >= 5000, `reported ${String(bytes)}`)
})
