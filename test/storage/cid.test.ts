// CIDs must be the ones `ipfs add --cid-version 1` gives. The reference here is computed
// independently of src/: ipfs-unixfs-importer's own fixed-size chunker and balanced layout over
// an in-memory blockstore, configured as Kubo configures it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { createEmbeddedStorage } from '../../src/storage/embedded.js'
import type { HashedPiece } from '../../src/storage/stream-pieces.js'
import { cidOfBytes, canonicalCid, fixedSizeChunker, parseCid } from '../../src/storage/cid.js'
import { isHearthError } from '../../src/errors.js'
import { tempDir } from '../support/tmp.js'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { referenceCid } from '../support/reference-cid.js'

const SIZES: Array<[string, number]> = [
  ['empty', 0],
  ['1 byte', 1],
  ['1 KB', 1024],
  ['exactly 256 KiB', 262_144],
  ['256 KiB + 1', 262_145],
  ['~3 MB', 3_000_001]
]

test('embedded add gives the CID of ipfs add --cid-version 1 (independent importer reference)', async (t) => {
  const dir = await tempDir(t)
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await storage.stop() })
  for (const [label, size] of SIZES) {
    const bytes = randomBytes(size)
    const expected = await referenceCid(bytes)
    const cid = await storage.add(bytes)
    assert.equal(cid, expected, label)
    assert.equal(await cidOfBytes(bytes), expected, `${label} (cidOfBytes)`)
    assert.ok(cid.startsWith(size <= 262_144 ? 'bafkrei' : 'bafybei'), `${label}: ${size <= 262_144 ? 'one raw leaf' : 'a dag-pb root'}`)
    assert.deepEqual(Buffer.from(await storage.get(cid)), bytes, `${label} reads back`)
  }
})

test('embedded addStream (a large file arriving in pieces) gives the same CIDs, however the pieces are cut', async (t) => {
  const dir = await tempDir(t)
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await storage.stop() })
  async function * pieces (bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  for (const [label, size] of SIZES) {
    const bytes = randomBytes(size)
    const expected = await referenceCid(bytes)
    for (const piece of [262_144, 100_000, 1_000_000]) {
      const cid = await storage.addStream!(pieces(bytes, piece))
      assert.equal(cid, expected, `${label} in pieces of ${piece}`)
    }
    assert.deepEqual(Buffer.from(await storage.get(expected)), bytes, `${label} reads back`)
    assert.equal(await storage.has(expected), true)
  }
})

test('embedded addStream of pieces that come with their SHA-256 (the encryption worker\'s) gives the same CIDs, and takes the digests as given', async (t) => {
  const dir = await tempDir(t)
  const storage = await createEmbeddedStorage({ blocksDir: join(dir, 'blocks'), datastoreDir: join(dir, 'datastore') })
  t.after(async () => { await storage.stop() })
  async function * hashed (bytes: Uint8Array, digestOf: (piece: Uint8Array, i: number) => Uint8Array): AsyncGenerator<HashedPiece> {
    // each piece its own buffer, as the worker hands them over
    for (let at = 0, i = 0; at < bytes.length; at += 262_144, i++) {
      const piece = new Uint8Array(bytes.subarray(at, at + 262_144))
      yield { bytes: piece, sha256: digestOf(piece, i) }
    }
  }
  const sha256 = (b: Uint8Array): Uint8Array => createHash('sha256').update(b).digest()
  for (const [label, size] of SIZES.filter(([, n]) => n > 0)) {
    const bytes = randomBytes(size)
    assert.equal(await storage.addStream!(hashed(bytes, sha256)), await referenceCid(bytes), label)
  }
  // a leaf's CID is made of the digest it came with: nothing hashes the piece again
  const bytes = randomBytes(3 * 262_144)
  const wrong = await storage.addStream!(hashed(bytes, (piece, i) => i === 1 ? sha256(new Uint8Array(1)) : sha256(piece)))
  assert.notEqual(wrong, await referenceCid(bytes))
})

test('the empty file has the CID every IPFS implementation gives it', async () => {
  // Published by Kubo and js-ipfs alike for `ipfs add --cid-version 1` of an empty file.
  assert.equal(await cidOfBytes(new Uint8Array(0)), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
})

test('a file of more than 174 chunks gets a two-level balanced DAG like the reference', async () => {
  const bytes = randomBytes(174 * 262_144 + 5)
  assert.equal(await cidOfBytes(bytes), await referenceCid(bytes))
})

test('the chunker cuts a stream of uneven pieces exactly like the importer', async () => {
  const bytes = randomBytes(262_144 * 3 + 777)
  const pieces: Uint8Array[] = []
  for (let i = 0; i < bytes.length;) { const n = 1 + ((i * 7919) % 100_000); pieces.push(bytes.subarray(i, i + n)); i += n }
  const collect = async (chunker: (s: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>): Promise<number[]> => {
    const sizes: number[] = []
    const out: Uint8Array[] = []
    for await (const c of chunker((async function * () { yield * pieces })())) { sizes.push(c.length); out.push(Uint8Array.from(c)) }
    assert.deepEqual(Buffer.concat(out), bytes)
    return sizes
  }
  assert.deepEqual(await collect(fixedSizeChunker()), await collect(fixedSize({ chunkSize: 262_144 })))
  assert.deepEqual(await collect(fixedSizeChunker()), [262_144, 262_144, 262_144, 777])
})

test('CID strings are parsed strictly and printed as CIDv1 base32', () => {
  const v0 = 'QmbWqxBEKC3P8tqsKc98xmWNzrzDtRLMiMPL8wBuTGsMnR'
  assert.equal(canonicalCid(v0), parseCid(v0).toV1().toString())
  assert.ok(canonicalCid(v0).startsWith('bafybei'))
  assert.equal(canonicalCid('ipfs://bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
  for (const bad of ['', 'not-a-cid', 'bafy', 'x'.repeat(600)]) {
    assert.throws(() => parseCid(bad), (err) => isHearthError(err, 'INVALID_ARGUMENT'), JSON.stringify(bad.slice(0, 20)))
  }
})

test('verified reads: bytes that are not the content of the CID are STORAGE_VERIFY_FAILED', async () => {
  const { verifyContent } = await import('../../src/storage/verified-reads.js')
  const { cidOfBytes } = await import('../../src/storage/cid.js')
  const { isHearthError } = await import('../../src/errors.js')
  const small = new TextEncoder().encode('ciphertext')
  const big = new Uint8Array(600_000).fill(7)
  await verifyContent(await cidOfBytes(small), small)
  await verifyContent(await cidOfBytes(big), big)
  await assert.rejects(verifyContent(await cidOfBytes(small), new TextEncoder().encode('garbled!!!')), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
  await assert.rejects(verifyContent(await cidOfBytes(big), big.slice(1)), (err) => isHearthError(err, 'STORAGE_VERIFY_FAILED'))
})
