// The floors bench/limits.ts prints beside its rows, measured in the same run: what the machine
// itself allows for the same work without Hearth around it.
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, rm, open } from 'node:fs/promises'
import { closeSync, fstatSync, futimesSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { writeMessage } from '../../src/protocol/openpgp-writer.js'

/**
 * Plain create+write+fsync+close of new 1 KB files at `concurrency` (files/s): what the disk and
 * the kernel allow for a file made durable per request, the floor the 16-client POST row is judged
 * against (issue #28). Measured before and after the Hearth rows of a run, as load moves it.
 */
export async function floorWriteFsync (concurrency: number, total: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-floor-'))
  const bytes = randomBytes(1024)
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const fh = await open(join(dir, `${next++}.json`), 'wx', 0o600)
      await fh.writeFile(bytes)
      await fh.sync()
      await fh.close()
    }
  }))
  const perSecond = total / ((performance.now() - started) / 1000)
  await rm(dir, { recursive: true, force: true })
  return perSecond
}

/**
 * One fdatasync after a 1 KB append to an open file, alone (ms, the median of `total`): the
 * durable write a lone POST's answer waits for (its index batch's), which the one-client p50
 * row is judged against.
 */
export async function floorFdatasync (total: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-floor-'))
  const bytes = randomBytes(1024)
  const fh = await open(join(dir, 'log'), 'a', 0o600)
  const times: number[] = []
  try {
    for (let i = 0; i < total; i++) {
      const started = performance.now()
      await fh.write(bytes)
      await fh.datasync()
      times.push(performance.now() - started)
    }
  } finally {
    await fh.close()
    await rm(dir, { recursive: true, force: true })
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

/**
 * The CPU (user + system, ms per file, this process) of what a POST's data file costs the kernel
 * alone, with nothing else running: the file writer's unsynced create (file-writer-ops.ts: a temp
 * opened, written, its mtime set, stat, closed, linked to its name in another folder, unlinked),
 * `total` files one after another on this thread. The 1 KB POST's CPU budget (0.35 ms, all threads)
 * is set beside it: on this VM the create alone cost 0.64-0.69 ms, nearly all system time, in
 * round 4's runs (a bare create: 0.02-0.3 ms in earlier rounds').
 */
export async function floorCreateCpu (total: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-floor-'))
  await mkdir(join(dir, 'scope'))
  await mkdir(join(dir, '.writing'))
  const bytes = randomBytes(1024)
  const before = process.cpuUsage()
  for (let i = 0; i < total; i++) {
    const temp = join(dir, '.writing', `t${i}`)
    const fd = openSync(temp, 'wx', 0o600)
    writeSync(fd, bytes)
    futimesSync(fd, Date.now() / 1000, Date.now() / 1000)
    fstatSync(fd, { bigint: true })
    closeSync(fd)
    linkSync(temp, join(dir, 'scope', `f${i}`))
    unlinkSync(temp)
  }
  const used = process.cpuUsage(before)
  await rm(dir, { recursive: true, force: true })
  return (used.user + used.system) / 1000 / total
}

/**
 * A lone POST's disk work without Hearth's CPU (issue #28's one-client rows): a LevelDB-sized
 * append (3.5 KB: a batch of a record and its journal entry) and its fdatasync, while another
 * thread creates the POST's 1 KB file beside it (a temp written, its mtime set, linked to its name
 * in a folder of its own, unlinked), and a syncfs of the filesystem every 200 ms (the journal's
 * checkpoint). p50 and p99 of `total` such writes one after another (ms). On this VM the create
 * beside the sync and the periodic syncfs, not the sync alone, set the tail: a bare append+fdatasync
 * has a p99 of ~0.5-0.8 ms, this one ~2-4 ms (bench/results/one-client-tail.md).
 */
export async function floorSyncBesideCreate (total: number): Promise<{ p50: number; p99: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-floor-'))
  await mkdir(join(dir, 'scope'))
  await mkdir(join(dir, '.writing'))
  const record = randomBytes(3500)
  const fh = await open(join(dir, 'log'), 'a', 0o600)
  const creator = new Worker(`
    const { parentPort, workerData: dir } = require('node:worker_threads')
    const fs = require('node:fs')
    const path = require('node:path')
    const bytes = Buffer.alloc(1024, 120)
    let i = 0
    parentPort.on('message', () => {
      const temp = path.join(dir, '.writing', 't' + i)
      const fd = fs.openSync(temp, 'wx', 0o600)
      fs.writeSync(fd, bytes)
      fs.futimesSync(fd, Date.now() / 1000, Date.now() / 1000)
      fs.fstatSync(fd, { bigint: true })
      fs.closeSync(fd)
      fs.linkSync(temp, path.join(dir, 'scope', 'f' + i++))
      fs.unlinkSync(temp)
      parentPort.postMessage(0)
    })`, { eval: true, workerData: dir })
  const syncer = spawn('sh', ['-c', 'while IFS= read -r p; do sync -f "$p"; done'], { stdio: ['pipe', 'ignore', 'ignore'] })
  const checkpoint = setInterval(() => { syncer.stdin!.write(`${dir}\n`) }, 200)
  const times: number[] = []
  try {
    for (let i = 0; i < total; i++) {
      const started = performance.now()
      const created = new Promise((resolve) => creator.once('message', resolve))
      creator.postMessage(0)
      await fh.write(record)
      await fh.datasync()
      await created
      times.push(performance.now() - started)
    }
  } finally {
    clearInterval(checkpoint)
    syncer.kill()
    await creator.terminate()
    await fh.close()
    await rm(dir, { recursive: true, force: true })
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! }
}

/** Bare openpgp.encrypt of 1 KB with minimal S2K (files/s). */
export async function floorOpenpgp (total: number): Promise<number> {
  const plaintext = randomBytes(1100)
  const password = randomBytes(32).toString('hex')
  const config: openpgp.PartialConfig = { s2kType: openpgp.enums.s2k.iterated, s2kIterationCountByte: 0, aeadProtect: false, preferredCompressionAlgorithm: openpgp.enums.compression.uncompressed }
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const message = await openpgp.createMessage({ binary: plaintext, format: 'binary' })
    await openpgp.encrypt({ message, passwords: [password], format: 'binary', config })
  }
  return total / ((performance.now() - started) / 1000)
}

/** Hearth's own writer (the message form every stored file has) over a 1 KB envelope (files/s). */
export function floorHearthWriter (total: number): number {
  const plaintext = randomBytes(1100)
  const password = randomBytes(32).toString('hex')
  const started = performance.now()
  for (let i = 0; i < total; i++) writeMessage(plaintext, password)
  return total / ((performance.now() - started) / 1000)
}

/** AES-256-CFB + SHA-256 over `bytes` (ms, median of `rounds`). */
export function floorAesSha (bytes: number, rounds: number): number {
  const raw = randomBytes(bytes)
  const key = randomBytes(32)
  const iv = randomBytes(16)
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    const c = createCipheriv('aes-256-cfb', key, iv)
    const out = Buffer.concat([c.update(raw), c.final()])
    createHash('sha256').update(out).digest()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}
