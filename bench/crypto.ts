// Crypto cost of one data file, side by side in one run:
//  - per-file encrypt+decrypt of a 1 KB envelope with OpenPGP.js's default S2K vs Hearth's choice
//  - MB/s for a 10 MB envelope with Hearth's settings (encrypt and decrypt separately)
//  - the ceiling: raw node:crypto AES-256-CFB / AES-256-CTR and SHA-256 (and SHA-1, the MDC hash)
// Run: node --import tsx bench/crypto.ts [--quick]
import '../src/polyfill.js'
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { buildEnvelope, serializeEnvelope } from '../src/protocol/envelope.js'
import { decryptEnvelopeBytes, encryptEnvelopeBytes, type S2kChoice } from '../src/protocol/encryption.js'
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
console.log('1 KB envelope, encrypt + decrypt per file')
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
let cipher: Uint8Array = new Uint8Array()
const encMs = await best(runs, async () => { cipher = await encryptEnvelopeBytes(big, password) })
const decMs = await best(runs, async () => { await decryptEnvelopeBytes(cipher, password) })
console.log(`10 MB envelope, hearth settings (best of ${runs})`)
console.log(`  openpgp encrypt        ${mbps(size, encMs)} MB/s  (${encMs.toFixed(0)} ms)`)
console.log(`  openpgp decrypt        ${mbps(size, decMs)} MB/s  (${decMs.toFixed(0)} ms)\n`)

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
