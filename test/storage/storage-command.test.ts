// `hearth storage migrate|cat` (src/cli/commands/storage.ts) on a real home folder, offline.
import { before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { PassThrough, Writable } from 'node:stream'
import { spawn } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { openStorage, type StorageConfig } from '../../src/storage/factory.js'
import { createKuboStorage } from '../../src/storage/kubo.js'
import { makeStorageCommand } from '../../src/cli/commands/storage.js'
import { EXIT } from '../../src/cli/command.js'
import { ensureIpfsInstalled, startIpfsDaemon, freeLoopbackPort } from '../support/ipfs-daemon.js'
import { tempDir } from '../support/tmp.js'

// A fresh checkout builds Kubo on first use; that can take many minutes, outside test timeouts.
before(async () => { await ensureIpfsInstalled() }, { timeout: 60 * 60_000 })

class Sink extends Writable {
  chunks: Buffer[] = []
  override _write (chunk: Buffer, _enc: string, cb: () => void): void { this.chunks.push(Buffer.from(chunk)); cb() }
  get bytes (): Buffer { return Buffer.concat(this.chunks) }
  get text (): string { return this.bytes.toString('utf8') }
}

async function run (cmd: ReturnType<typeof makeStorageCommand>, home: HomeLayout, args: string[]): Promise<{ code: number; stdout: Sink; stderr: Sink }> {
  const stdout = new Sink()
  const stderr = new Sink()
  const code = await cmd.run({ home, args, stdout, stderr, stdin: new PassThrough(), env: {} })
  return { code, stdout, stderr }
}

/** A home whose embedded store holds some files; the CID list stands in for the index. */
async function homeWithFiles (t: Parameters<typeof tempDir>[0], count: number): Promise<{ home: HomeLayout; files: Map<string, Buffer> }> {
  const home = homeLayout(await tempDir(t))
  const storage = await openStorage({ backend: 'embedded' }, home)
  const files = new Map<string, Buffer>()
  for (let i = 0; i < count; i++) { const b = randomBytes(500 + i * 30_000); files.set(await storage.add(b), b) }
  await storage.stop()
  return { home, files }
}

function commandFor (files: Map<string, Buffer>, current: StorageConfig = { backend: 'embedded' }): { cmd: ReturnType<typeof makeStorageCommand>; switched: StorageConfig[] } {
  const switched: StorageConfig[] = []
  const cmd = makeStorageCommand({
    listCids: async function * () { yield * files.keys() },
    setBackend: async (_home, cfg) => { switched.push(cfg) },
    readBackend: async () => current,
    countCids: async () => files.size
  })
  return { cmd, switched }
}

test('storage migrate --to kubo copies every CID, reports progress, then switches', async (t) => {
  const daemon = await startIpfsDaemon(t)
  const { home, files } = await homeWithFiles(t, 12)
  const { cmd, switched } = commandFor(files)

  // A CID the index knows but the store lost: the migration fails and nothing is switched.
  const absent = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
  const withLoss = commandFor(new Map([...files, [absent, Buffer.alloc(0)]]))
  const lost = await run(withLoss.cmd, home, ['migrate', '--to', 'kubo', '--kubo-url', daemon.apiUrl])
  assert.equal(lost.code, EXIT.NOT_FOUND)
  assert.match(lost.stderr.text, /error STORAGE_NOT_FOUND: 1 CID\(s\) are not on the embedded backend/)
  assert.deepEqual(withLoss.switched, [])

  const r = await run(cmd, home, ['migrate', '--to', 'kubo', '--kubo-url', daemon.apiUrl, '--kubo-header', 'X-Test: yes', '--kubo-timeout-ms', '8000'])
  assert.equal(r.code, EXIT.OK, r.stderr.text)
  assert.match(r.stdout.text, /migrated 12 CID\(s\) from embedded to kubo: 0 copied, 12 already there, 12 verified; storage.backend is now kubo/,
    'the failed run had already copied and verified every CID it could; this run only verifies them')
  assert.match(r.stderr.text, /storage migrate: 12\/12 CID\(s\) done/)
  assert.deepEqual(switched, [{ backend: 'kubo', kubo: { url: daemon.apiUrl, headers: { 'x-test': 'yes' }, timeoutMs: 8000 } }])
  const kubo = createKuboStorage({ url: daemon.apiUrl })
  for (const [cid, bytes] of files) assert.deepEqual(Buffer.from(await kubo.get(cid)), bytes)

  const json = await run(cmd, home, ['migrate', '--to', 'kubo', '--kubo-url', daemon.apiUrl, '--json'])
  assert.equal(json.code, EXIT.OK)
  assert.deepEqual(JSON.parse(json.stdout.text), { from: 'embedded', to: 'kubo', copied: 0, verified: 12, skipped: 12 })

  // cat through either backend prints the raw stored bytes
  const [cid, bytes] = [...files][5]
  const viaKubo = await run(cmd, home, ['cat', cid, '--backend', 'kubo', '--kubo-url', daemon.apiUrl])
  assert.equal(viaKubo.code, EXIT.OK)
  assert.deepEqual(viaKubo.stdout.bytes, bytes)
  const viaEmbedded = await run(cmd, home, ['cat', cid])
  assert.equal(viaEmbedded.code, EXIT.OK)
  assert.deepEqual(viaEmbedded.stdout.bytes, bytes)

  // and back: kubo → embedded into a fresh home
  const fresh = homeLayout(await tempDir(t))
  const back = commandFor(files, { backend: 'kubo', kubo: { url: daemon.apiUrl } })
  const r2 = await run(back.cmd, fresh, ['migrate', '--to', 'embedded'])
  assert.equal(r2.code, EXIT.OK, r2.stderr.text)
  assert.deepEqual(back.switched, [{ backend: 'embedded' }])
  const embedded = await openStorage({ backend: 'embedded' }, fresh)
  t.after(async () => { await embedded.stop() })
  for (const [c, b] of files) assert.deepEqual(Buffer.from(await embedded.get(c)), b)
})

test('storage migrate refuses while the daemon runs, and never switches after a failure', async (t) => {
  const { home, files } = await homeWithFiles(t, 2)
  const { cmd, switched } = commandFor(files)

  // A daemon of another process holds the home: its pid is in the lock file and alive.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' })
  t.after(() => { other.kill('SIGKILL') })
  await mkdir(home.run, { recursive: true })
  await writeFile(home.lock, `${other.pid}\n`)
  const locked = await run(cmd, home, ['migrate', '--to', 'kubo'])
  await rm(home.lock)
  assert.equal(locked.code, EXIT.FAILURE)
  assert.match(locked.stderr.text, /error DAEMON_LOCKED: stop the daemon/)

  const down = await run(cmd, home, ['migrate', '--to', 'kubo', '--kubo-url', `http://127.0.0.1:${await freeLoopbackPort()}`])
  assert.equal(down.code, EXIT.FAILURE)
  assert.match(down.stderr.text, /error STORAGE_UNAVAILABLE: the new kubo backend is not reachable/)

  const same = await run(cmd, home, ['migrate', '--to', 'embedded'])
  assert.equal(same.code, EXIT.USAGE)
  assert.match(same.stderr.text, /already uses the embedded backend/)
  assert.deepEqual(switched, [])

})

test('storage command arguments are checked', async (t) => {
  const { home, files } = await homeWithFiles(t, 1)
  const { cmd } = commandFor(files)
  for (const args of [[], ['frobnicate'], ['migrate'], ['migrate', '--to', 'floppy'], ['migrate', '--to', 'kubo', 'extra'],
    ['migrate', '--to', 'kubo', '--kubo-header', 'no-colon'], ['migrate', '--to', 'kubo', '--kubo-timeout-ms', 'soon'], ['cat'], ['cat', 'a', 'b']]) {
    const r = await run(cmd, home, args)
    assert.equal(r.code, EXIT.USAGE, `${args.join(' ')}: ${r.stderr.text}`)
    assert.match(r.stderr.text, /error INVALID_ARGUMENT/)
  }
  const bad = await run(cmd, home, ['cat', 'not-a-cid'])
  assert.equal(bad.code, EXIT.USAGE)
  assert.match(bad.stderr.text, /error INVALID_ARGUMENT: not a CID/)
  const absent = await run(cmd, home, ['cat', 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'])
  assert.equal(absent.code, EXIT.NOT_FOUND)
  assert.match(absent.stderr.text, /error STORAGE_NOT_FOUND/)
})
