// Crypto cost of one data file, side by side in one run:
//  - per-file encrypt+decrypt of a 1 KB envelope with OpenPGP.js's default S2K vs Hearth's choice
//  - the writer: OpenPGP.js's openpgp.encrypt with Hearth's settings vs Hearth's own writer
//    (openpgp-writer.ts), 1 KB files/s and 10 MB MB/s (whole and streamed in 256 KiB pieces),
//    next to the AES-256-CFB + SHA-256 floor of the same run
//  - the reader: OpenPGP.js's openpgp.decrypt vs Hearth's own reader (openpgp-reader.ts) on
//    Hearth's messages, ms per 1 KB file and 10 MB MB/s (whole and streamed), next to the
//    AES-256-CFB + SHA-1 floor of the same run
//  - MB/s for a 10 MB envelope with Hearth's settings (encrypt and decrypt separately)
//  - the ceiling: raw node:crypto AES-256-CFB / AES-256-CTR and SHA-256 (and SHA-1, the MDC hash)
// Run: node --import tsx bench/crypto.ts [--quick]
import '../src/polyfill.js'
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import * as openpgp from 'openpgp'
import { buildEnvelope, serializeEnvelope } from '../src/protocol/envelope.js'
import { decryptEnvelopeBytes, decryptWithOpenpgp, encryptEnvelopeBytes, type S2kChoice } from '../src/protocol/encryption.js'
import { readMessage } from '../src/protocol/openpgp-reader.js'
import { writeMessage, writeMessagePieces } from '../src/protocol/openpgp-writer.js'
import { scopeKeyHex, masterKeyFromSignature, signMasterKey } from '../src/protocol/keys.js'

const quick = process.argv.includes('--quick')
const MB = 1024 * 1024

function envelopeOfSize (bytes: number): Uint8Array {
  const base = { definitionUrl: 'ipfs://bafkreibench', scope: 'instagram.profile', collectedAt: '2026-01-21T10:00:00.000Z' }
  const empty = serializeEnvelope(buildEnvelope({ ...base, data: { blob: '' } })).length
  return serializeEnvelope(buildEnvelope({ ...base, data: { blob: 'x'.repeat(Math.max(0, bytes - empty)) } }))
}

async function perFile (plaintext: Uint8Array, password: string, s2k: S2kChoice, files: number): Promise<{ msPerFile: number, filesPerSec: number }> {
  for (let i = 0; i < Math.min(5, files); i++) await decryptEnvelopeBytes(await encryptEnvelopeBytes(plaintext, password, { s2k }), password)
  const start = performance.now()
  for (let i = 0; i < files; i++) {
    const c = await encryptEnvelopeBytes(plaintext, password, { s2k })
    await decryptEnvelopeBytes(c, password)
  }
  const ms = (performance.now() - start) / files
  return { msPerFile: ms, filesPerSec: 1000 / ms }
}

async function best (runs: number, fn: () => Promise<void> | void): Promise<number> {
  let min = Infinity
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    min = Math.min(min, performance.now() - start)
  }
  return min
}

const mbps = (bytes: number, ms: number): string => (bytes / MB / (ms / 1000)).toFixed(0).padStart(6)

const { masterKey } = await masterKeyFromSignature(await signMasterKey(`0x${randomBytes(32).toString('hex')}`))
const password = scopeKeyHex(masterKey, 'instagram.profile')

console.log(`node ${process.version}, ${quick ? 'quick run' : 'full run'}\n`)
console.log('1 KB envelope, encrypt (hearth writer or OpenPGP.js) + decrypt (hearth reader or OpenPGP.js) per file')
const small = envelopeOfSize(1024)
const rows: Array<[string, S2kChoice, number]> = [
  ['openpgp default S2K (iterated, count byte 224 = 16 MiB)', 'openpgp-default', quick ? 10 : 40],
  ['hearth S2K         (iterated, count byte 0 = 1 KiB)   ', 'hearth', quick ? 200 : 2000]
]
const results: Record<string, number> = {}
for (const [label, s2k, files] of rows) {
  const r = await perFile(small, password, s2k, files)
  results[s2k] = r.msPerFile
  console.log(`  ${label}  ${r.msPerFile.toFixed(3).padStart(8)} ms/file  ${r.filesPerSec.toFixed(0).padStart(6)} files/s  (${files} files)`)
}
console.log(`  speed-up: ${(results['openpgp-default']! / results.hearth!).toFixed(0)}x\n`)

const size = 10 * MB
const big = envelopeOfSize(size)
const runs = quick ? 2 : 5

// what openpgp.encrypt wrote for Hearth before its own writer
const OPENPGP_HEARTH_CONFIG: openpgp.PartialConfig = { s2kType: openpgp.enums.s2k.iterated, s2kIterationCountByte: 0, aeadProtect: false, preferredSymmetricAlgorithm: openpgp.enums.symmetric.aes256, preferredCompressionAlgorithm: openpgp.enums.compression.uncompressed }
const openpgpEncrypt = async (plaintext: Uint8Array): Promise<Uint8Array> =>
  await openpgp.encrypt({ message: await openpgp.createMessage({ binary: plaintext, format: 'binary' }), passwords: [password], format: 'binary', config: OPENPGP_HEARTH_CONFIG })
const writers: Array<[string, (p: Uint8Array) => Promise<unknown> | unknown]> = [
  ['openpgp.encrypt (OpenPGP.js, hearth settings)', openpgpEncrypt],
  ['hearth writer, whole                         ', (p) => writeMessage(p, password)],
  ['hearth writer, streamed in 256 KiB pieces    ', (p) => { for (const _ of writeMessagePieces(p, password, { pieceBytes: 262_144 })) { /* drain */ } }]
]
const smallFiles = quick ? 500 : 5000
/** AES-256-CFB over `bytes` and a hash of the result: what a writer (SHA-256 of the plaintext) or reader (SHA-1 MDC) cannot beat. */
const cfbFloorMs = async (hash: 'sha256' | 'sha1', bytes: Uint8Array): Promise<number> =>
  await best(runs, () => { const c = createCipheriv('aes-256-cfb', randomBytes(32), Buffer.alloc(16)); createHash(hash).update(Buffer.concat([c.update(bytes), c.final()])).digest() })
const floorMs = await cfbFloorMs('sha256', big)
console.log(`encrypt only: 1 KB (${smallFiles} files) and 10 MB (best of ${runs}); floor AES-256-CFB + SHA-256 over 10 MB ${mbps(size, floorMs)} MB/s (${floorMs.toFixed(1)} ms)`)
for (const [label, write] of writers) {
  for (let i = 0; i < 50; i++) await write(small)
  const smallMs = await best(1, async () => { for (let i = 0; i < smallFiles; i++) await write(small) })
  const bigMs = await best(runs, async () => { await write(big) })
  console.log(`  ${label}  ${(smallFiles / (smallMs / 1000)).toFixed(0).padStart(7)} files/s (1 KB)  ${mbps(size, bigMs)} MB/s (10 MB, ${bigMs.toFixed(1)} ms)`)
}
console.log('')

// the reader, on messages Hearth wrote (a received file, a read of a superseded version)
const readers: Array<[string, (m: Uint8Array) => Promise<unknown> | unknown]> = [
  ['openpgp.decrypt (OpenPGP.js)', async (m) => await decryptWithOpenpgp(m, password)],
  ['hearth reader               ', (m) => { if (!('plaintext' in readMessage(m, password))) throw new Error('not read') }]
]
const smallMessage = writeMessage(small, password)
const bigWhole = writeMessage(big, password)
const bigStreamed = new Uint8Array(Buffer.concat([...writeMessagePieces(big, password, { pieceBytes: 262_144 })]))
const readFloorMs = await cfbFloorMs('sha1', bigWhole)
console.log(`decrypt only: 1 KB (${smallFiles} files) and 10 MB (best of ${runs}); floor AES-256-CFB + SHA-1 over 10 MB ${mbps(size, readFloorMs)} MB/s (${readFloorMs.toFixed(1)} ms)`)
for (const [label, read] of readers) {
  for (let i = 0; i < 50; i++) await read(smallMessage)
  const smallMs = await best(1, async () => { for (let i = 0; i < smallFiles; i++) await read(smallMessage) })
  const wholeMs = await best(runs, async () => { await read(bigWhole) })
  const streamedMs = await best(runs, async () => { await read(bigStreamed) })
  console.log(`  ${label}  ${(smallMs / smallFiles).toFixed(4).padStart(8)} ms/file  ${(smallFiles / (smallMs / 1000)).toFixed(0).padStart(7)} files/s (1 KB)  ${mbps(size, wholeMs)} MB/s (10 MB whole, ${wholeMs.toFixed(1)} ms)  ${mbps(size, streamedMs)} MB/s (streamed, ${streamedMs.toFixed(1)} ms)`)
}
console.log('')

let cipher: Uint8Array = new Uint8Array()
const encMs = await best(runs, async () => { cipher = await encryptEnvelopeBytes(big, password) })
const decMs = await best(runs, async () => { await decryptEnvelopeBytes(cipher, password) })
console.log(`10 MB envelope, hearth settings (best of ${runs})`)
console.log(`  hearth encrypt         ${mbps(size, encMs)} MB/s  (${encMs.toFixed(0)} ms)`)
console.log(`  hearth decrypt         ${mbps(size, decMs)} MB/s  (${decMs.toFixed(0)} ms)\n`)

const raw = randomBytes(size)
const key = randomBytes(32)
const iv = randomBytes(16)
const ceiling: Array<[string, () => void]> = [
  ['node aes-256-cfb enc ', () => { const c = createCipheriv('aes-256-cfb', key, iv); c.update(raw); c.final() }],
  ['node aes-256-ctr enc ', () => { const c = createCipheriv('aes-256-ctr', key, iv); c.update(raw); c.final() }],
  ['node sha-256         ', () => { createHash('sha256').update(raw).digest() }],
  ['node sha-1 (MDC)     ', () => { createHash('sha1').update(raw).digest() }]
]
console.log(`ceiling, 10 MB (best of ${runs})`)
for (const [label, fn] of ceiling) {
  const ms = await best(runs, fn)
  console.log(`  ${label}  ${mbps(size, ms)} MB/s  (${ms.toFixed(1)} ms)`)
}
