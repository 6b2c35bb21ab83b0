// An IPFS gateway the owner configured (`restore.gateways`) as a source of missing ciphertexts,
// spoken to in the trustless form: every block on its own (`GET {base}/ipfs/{cid}?format=raw`,
// `Accept: application/vnd.ipld.raw`), each checked against the hash in its CID before it is used.
// A UnixFS file's DAG is walked by ipfs-unixfs-exporter over a block store that fetches and
// verifies, so a dag-pb root's links are followed only once the root itself is proven. Only raw
// and dag-pb blocks hashed with sha2-256 are accepted (what `ipfs add` makes); the walk is bounded
// in blocks, in bytes per block and in total, and every request has a deadline.
//
// Helia's own trustless-gateway client was not used: it folds every HTTP status into one error
// text (a 404 "not here" cannot be told from a failure) and leaves verification to a block broker
// that needs a Helia node with routing.
//
// The owner names the gateway, so loopback and private addresses are allowed here (unlike the
// schema-definition fetches, whose URLs come from the chain).
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { code as RAW_CODEC } from 'multiformats/codecs/raw'
import { code as DAG_PB_CODEC } from '@ipld/dag-pb'
import { HearthError, isHearthError } from '../errors.js'
import { CHUNK_SIZE, canonicalCid } from './cid.js'
import type { BlockSource } from './block-sources.js'

/** Largest block accepted (the IPFS block-size limit; Hearth's own blocks are 256 KiB at most). */
export const MAX_BLOCK_BYTES = 2 * 1024 * 1024
/** Blocks fetched at once while walking one file. */
const BLOCK_CONCURRENCY = 4

export interface GatewaySourceOptions {
  /** Base URL: `https://gw.example` or `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string
  /** Deadline of one block request, headers and body. */
  requestTimeoutMs: number
}

/** The most blocks a file of `maxBytes` may take: its leaves, plus parents, with room for smaller chunks. */
export function maxBlocksFor (maxBytes: number): number {
  return 2 * Math.ceil(maxBytes / CHUNK_SIZE) + 16
}

export function createGatewaySource (opts: GatewaySourceOptions): BlockSource {
  const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`)
  const name = `gateway ${base.origin}${base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '')}`
  return {
    kind: 'gateway',
    name,
    async fetch (cidText, { signal, maxBytes }) {
      const root = CID.parse(canonicalCid(cidText))
      let blocks = 0
      const maxBlocks = maxBlocksFor(maxBytes)
      const blockstore = {
        // the exporter reads a block as an iterable of chunks
        async * get (cid: CID) {
          if (++blocks > maxBlocks) throw new HearthError('FILE_TOO_LARGE', `${name}: ${root} takes more than ${maxBlocks} blocks`)
          yield await verifiedBlock(base, name, cid, signal, opts.requestTimeoutMs)
        }
      }
      try {
        // loaded on the first fetch, not with the daemon (idle memory)
        const { exporter } = await import('ipfs-unixfs-exporter')
        const entry = await exporter(root, blockstore, { signal })
        if (entry.type !== 'file' && entry.type !== 'raw') {
          throw new HearthError('INVALID_ARGUMENT', `${root} is a UnixFS ${entry.type}, not a file`)
        }
        if (entry.size > BigInt(maxBytes)) throw new HearthError('FILE_TOO_LARGE', `${root} holds ${entry.size} bytes, more than the ${maxBytes} accepted`)
        const out = new Uint8Array(Number(entry.size))
        let filled = 0
        for await (const chunk of entry.content({ signal, blockReadConcurrency: BLOCK_CONCURRENCY })) {
          if (filled + chunk.byteLength > out.byteLength) throw new HearthError('STORAGE_VERIFY_FAILED', `${name}: the blocks of ${root} hold more bytes than its root declares`)
          out.set(chunk, filled)
          filled += chunk.byteLength
        }
        if (filled !== out.byteLength) throw new HearthError('STORAGE_VERIFY_FAILED', `${name}: the blocks of ${root} hold fewer bytes than its root declares`)
        return out
      } catch (err) {
        if (isHearthError(err, 'STORAGE_NOT_FOUND')) return null
        if (isHearthError(err) || signal.aborted) throw err
        // the exporter's own refusals: a proven block that is no UnixFS file (or a bad DAG)
        throw new HearthError('STORAGE_VERIFY_FAILED', `${name}: ${root} is not a well-formed UnixFS file: ${(err as Error).message}`)
      }
    }
  }
}

/** One block from the gateway, its hash checked against its CID. */
async function verifiedBlock (base: URL, name: string, cid: CID, outer: AbortSignal, timeoutMs: number): Promise<Uint8Array> {
  if (cid.code !== RAW_CODEC && cid.code !== DAG_PB_CODEC) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `${cid} is neither a raw nor a dag-pb block (codec 0x${cid.code.toString(16)}); only UnixFS files are restored`)
  }
  if (cid.multihash.code !== sha256.code) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `${cid} is hashed with 0x${cid.multihash.code.toString(16)}, which Hearth does not verify (sha2-256 only)`)
  }
  const url = new URL(`ipfs/${cid.toString()}`, base)
  url.search = '?format=raw'
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = AbortSignal.any([outer, timeout])
  let bytes: Uint8Array
  try {
    const res = await fetch(url, { signal, headers: { accept: 'application/vnd.ipld.raw' }, redirect: 'follow' })
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel().catch(() => {})
      throw new HearthError('STORAGE_NOT_FOUND', `${name} does not have ${cid}`)
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {})
      throw new HearthError('STORAGE_UNAVAILABLE', `${name} answered ${res.status} for ${cid}`, { status: res.status })
    }
    bytes = await boundedBody(res, MAX_BLOCK_BYTES, `${name} sent more than ${MAX_BLOCK_BYTES} bytes for the block ${cid}`)
  } catch (err) {
    if (isHearthError(err) || outer.aborted) throw err
    if (timeout.aborted) throw new HearthError('TIMEOUT', `${name} gave no complete block ${cid} within ${timeoutMs} ms`)
    throw new HearthError('STORAGE_UNAVAILABLE', `${name} cannot be reached: ${errorText(err)}`)
  }
  const digest = await sha256.digest(bytes)
  if (!Buffer.from(digest.digest).equals(Buffer.from(cid.multihash.digest))) {
    throw new HearthError('STORAGE_VERIFY_FAILED', `${name} sent bytes for ${cid} that do not match it (refused)`, { cid: cid.toString() })
  }
  return bytes
}

async function boundedBody (res: Response, limit: number, tooLarge: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > limit) {
    await res.body?.cancel().catch(() => {})
    throw new HearthError('STORAGE_VERIFY_FAILED', tooLarge)
  }
  if (res.body === null) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let length = 0
  const reader = res.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      length += value.byteLength
      if (length > limit) throw new HearthError('STORAGE_VERIFY_FAILED', tooLarge)
      chunks.push(value)
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return Buffer.concat(chunks, length)
}

function errorText (err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause
  return cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err)
}
