// A data file's mtime as the writer gives it and Hearth reads it (src/storage/file-times.ts):
// whole microseconds, a random part of them besides the millisecond, and read back exactly what
// was set, whether the platform kept the microsecond (Node 20, 22) or nanoseconds past it (24).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { futimesSeconds, markedMtime, mtimeMsOf, reportedMtimeMs, sizeAndMtime } from '../../src/storage/file-times.js'
import { setMtimeNs } from '../support/power-cut.js'
import { tempDir } from '../support/tmp.js'

test('a marked mtime is its millisecond plus 1–999 whole microseconds, and a file given it (or any whole-microsecond time) by futimes reads it back exactly', async (t) => {
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
      const exact = await fh.stat({ bigint: true })
      assert.equal(mtimeMsOf(exact), mtimeMs, `${mtimeMs} read back (${exact.mtimeNs} ns)`)
      assert.equal(exact.mtimeNs / 1000n, BigInt(Math.round(mtimeMs * 1000)), 'in the very microsecond asked for')
    }
  } finally {
    await fh.close()
  }
})

test('a file\'s mtime is its microsecond whatever nanoseconds the platform kept past it, and the same number each time it is read; plain stat\'s number is what reportedMtimeMs says', async (t) => {
  const path = join(await tempDir(t, 'hearth-times-'), 'f')
  await writeFile(path, 'abc')
  const marked = markedMtime(1_795_813_944_830)
  const micros = BigInt(Math.round(marked * 1000))
  // Node 24 leaves …516576 ns for a mark of …516 µs; a filesystem could keep any of the 1000
  for (const extraNs of [0n, 1n, 380n, 499n, 500n, 576n, 620n, 999n]) {
    await setMtimeNs(path, micros * 1000n + extraNs)
    const exact = await stat(path, { bigint: true })
    assert.equal(exact.mtimeNs, micros * 1000n + extraNs, 'the nanoseconds set')
    assert.equal(mtimeMsOf(exact), marked, `${extraNs} ns past the mark's microsecond`)
    assert.deepEqual(sizeAndMtime(exact), { size: 3, mtimeMs: marked })
    assert.equal(reportedMtimeMs(exact), (await stat(path)).mtimeMs, 'as plain stat reports it')
  }
  // another file's time: a whole second, before 1970 too
  for (const ns of [1_700_000_000_000_000_000n, -2_000_000_000n]) {
    await setMtimeNs(path, ns)
    const exact = await stat(path, { bigint: true })
    assert.equal(mtimeMsOf(exact), Number(ns / 1_000_000n), `${ns} ns`)
    assert.equal(reportedMtimeMs(exact), (await stat(path)).mtimeMs)
  }
})
