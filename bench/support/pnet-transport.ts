// The private network's cost in isolation, for bench/sync.ts: XSalsa20 alone per implementation
// (the `xsalsa20` WebAssembly package @libp2p/pnet uses, libsodium through sodium-native, and
// @noble/ciphers' pure JS), then one stream of 256 KiB frames between two sync nodes in this
// process (TCP + pnet + Noise + Yamux on 127.0.0.1, both ends on this one thread, so CPU per MB
// counts both devices' work) with each implementation behind the same protector and Noise's own
// node:crypto cipher, and the default now: libsodium's XSalsa20 and Noise on libsodium
// (src/sync/noise-crypto.ts).
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import * as lp from 'it-length-prefixed'
import { silentLogger } from '../../src/log.js'
import { createSyncNode, type NoiseCrypto } from '../../src/sync/node.js'
import { availableCiphers, type PnetCipher } from '../../src/sync/pnet.js'

const require = createRequire(import.meta.url)
const FRAME = 256 * 1024
const PROTOCOL = '/hearth-bench/sink/1.0.0'

export interface CipherRow { what: string; [variant: string]: string }

function rate (bytes: number, ms: number): string { return (bytes / 1e6 / (ms / 1000)).toFixed(0) }

/** XSalsa20 over `megabytes` MB in 64 KiB updates (pnet's socket reads are at most 64 KiB). */
export async function bareCipherRow (megabytes: number): Promise<CipherRow> {
  const key = randomBytes(32)
  const nonce = randomBytes(24)
  const data = randomBytes(64 * 1024)
  const out = new Uint8Array(data.byteLength)
  const total = megabytes * 1e6
  const time = (update: () => void): number => {
    const started = performance.now()
    for (let done = 0; done < total; done += data.byteLength) update()
    return performance.now() - started
  }
  const wasm = (require('xsalsa20') as (n: Uint8Array, k: Uint8Array) => { update (i: Uint8Array, o: Uint8Array): void })(nonce, key)
  const row: CipherRow = { what: 'XSalsa20 alone, MB/s (64 KiB updates)', wasm: rate(total, time(() => wasm.update(data, out))) }
  if (availableCiphers().includes('sodium')) {
    const sodium = require('sodium-native') as { crypto_stream_xor_STATEBYTES: number; crypto_stream_xor_init (s: Uint8Array, n: Uint8Array, k: Uint8Array): void; crypto_stream_xor_update (s: Uint8Array, o: Uint8Array, i: Uint8Array): void }
    const state = new Uint8Array(sodium.crypto_stream_xor_STATEBYTES)
    sodium.crypto_stream_xor_init(state, nonce, key)
    row.sodium = rate(total, time(() => sodium.crypto_stream_xor_update(state, out, data)))
  }
  try {
    // @noble/ciphers comes with @chainsafe/libp2p-noise; stateless, so the block counter is ours
    const { xsalsa20 } = await import('@noble/ciphers/salsa.js' as string) as { xsalsa20: (k: Uint8Array, n: Uint8Array, d: Uint8Array, o: Uint8Array, counter: number) => Uint8Array }
    let counter = 0
    row['@noble/ciphers'] = rate(total, time(() => { xsalsa20(key, nonce, data, out, counter); counter += data.byteLength / 64 }))
  } catch { /* not installed: no column */ }
  return row
}

/** `megabytes` MB as 256 KiB frames over one stream between two nodes of this process. */
async function streamOnce ({ cipher, noise }: Variant, megabytes: number): Promise<{ ms: number; cpuMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-pnet-'))
  const networkKey = randomBytes(32)
  const make = async (name: string): Promise<Awaited<ReturnType<typeof createSyncNode>>> => {
    const n = await createSyncNode({ networkKey, peerKeyFile: join(dir, name), listen: ['/ip4/127.0.0.1/tcp/0'], logger: silentLogger(), pnetCipher: cipher, noiseCrypto: noise })
    await n.start()
    return n
  }
  const a = await make('a')
  const b = await make('b')
  try {
    const frames = Math.ceil(megabytes * 1e6 / FRAME)
    let received = 0
    let finished = (): void => {}
    const done = new Promise<void>((resolve) => { finished = resolve })
    await b.libp2p.handle(PROTOCOL, async (stream) => {
      for await (const frame of lp.decode(stream, { maxDataLength: 2 * FRAME })) {
        received += frame.byteLength
        if (received >= frames * FRAME) finished()
      }
    })
    const stream = await a.libp2p.dialProtocol(multiaddr(b.multiaddrs()[0]!), PROTOCOL)
    const frame = randomBytes(FRAME)
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (let i = 0; i < frames; i++) {
      if (!stream.send(lp.encode.single(frame))) await stream.onDrain()
    }
    await done
    const ms = performance.now() - started
    const used = process.cpuUsage(cpu)
    await stream.close()
    return { ms, cpuMs: (used.user + used.system) / 1000 }
  } finally {
    await a.stop()
    await b.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

interface Variant { label: string; cipher: PnetCipher; noise: NoiseCrypto }

/** MB/s and CPU ms per MB of one stream per implementation, alternated over `rounds` (median). */
export async function streamRows (megabytes: number, rounds: number): Promise<CipherRow[]> {
  const ciphers = availableCiphers()
  const variants: Variant[] = ciphers.map((cipher) => ({ label: cipher, cipher, noise: 'node' }))
  if (ciphers.includes('sodium')) variants.push({ label: 'sodium + Noise on sodium', cipher: 'sodium', noise: 'sodium' })
  const runs = new Map<string, Array<{ ms: number; cpuMs: number }>>(variants.map((v) => [v.label, []]))
  await streamOnce(variants[0]!, Math.min(megabytes, 20)) // warm-up: JIT, first connection
  for (let r = 0; r < rounds; r++) for (const v of variants) runs.get(v.label)!.push(await streamOnce(v, megabytes))
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!
  const mbps: CipherRow = { what: `one stream, ${megabytes} MB in 256 KiB frames, TCP+pnet+Noise+Yamux, both ends in one process: MB/s` }
  const cpu: CipherRow = { what: '  the same: CPU ms per MB (both ends)' }
  for (const v of variants) {
    const rs = runs.get(v.label)!
    mbps[v.label] = rate(megabytes * 1e6, median(rs.map((x) => x.ms)))
    cpu[v.label] = median(rs.map((x) => x.cpuMs / megabytes)).toFixed(2)
  }
  return [mbps, cpu]
}
