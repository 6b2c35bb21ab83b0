// A data file's mtime as the writer gives it (src/storage/file-times.ts): whole microseconds, a
// random part of them besides the millisecond, and stat gives back exactly what was set.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { futimesSeconds, markedMtime } from '../../src/storage/file-times.js'
import { tempDir } from '../support/tmp.js'

test('a marked mtime is its millisecond plus 1–999 whole microseconds, and a file given it (or any whole-microsecond time) by futimes reports it back exactly', async (t) => {
  const fh = await open(join(await tempDir(t, 'hearth-times-'), 'f'), 'wx')
  try {
    const now = Date.now()
    const parts = new Set<number>()
    const times: number[] = []
    for (let i = 0; i < 500; i++) {
      const ms = now + i * 7_919_993 // across many seconds, and the whole range of sub-second parts
      const marked = markedMtime(ms)
      const micros = Math.round(marked * 1000)
      assert.equal(Math.floor(micros / 1000), ms, `${marked} is in ${ms}`)
      assert.ok(micros % 1000 >= 1 && micros % 1000 <= 999, `${marked} has microseconds`)
      parts.add(micros % 1000)
      times.push(marked)
    }
    assert.ok(parts.size > 100, 'the microseconds are random')
    // whole milliseconds and the edges of a second, as a copy keeping times would set them
    times.push(now, Math.floor(now / 1000) * 1000, Math.floor(now / 1000) * 1000 + 999.999, Math.floor(now / 1000) * 1000 + 0.001)
    for (const mtimeMs of times) {
      await fh.utimes(futimesSeconds(mtimeMs), futimesSeconds(mtimeMs))
      assert.equal((await fh.stat()).mtimeMs, mtimeMs)
    }
  } finally {
    await fh.close()
  }
})
