// The kubo backend (docs/protocol.md §3.3): ciphertext lives on the user's own IPFS node (Kubo, an IPFS
// cluster's Kubo peer, or any node that speaks the Kubo RPC API) reached with kubo-rpc-client.
//
// Decisions:
// - Adds use the shared parameters of cid.ts and `pin=true`, so the node pins what it stored in the
//   same request and the CID equals the embedded backend's for the same bytes. The CID is also
//   computed locally while the bytes upload (hashing is far cheaper than the request) and must be
//   the one the node answers: a node configured to import differently is refused, never trusted.
// - Every request carries our own deadline (an AbortSignal): kubo-rpc-client's `timeout` option is
//   only forwarded to the server as a query parameter and does not bound the client side. A node
//   that refuses, resets or does not answer in time is STORAGE_UNAVAILABLE, with the URL (never its
//   credentials) in the message and never a stack.
// - `get` lets the node use its own routing to find content it lacks (that is what a Kubo node is
//   for, e.g. when restoring on a new device); the node is told to give up a little before our
//   deadline, so "not found in time" (STORAGE_NOT_FOUND) is told apart from "node unresponsive"
//   (STORAGE_UNAVAILABLE).
// - `has` is "recursively pinned on the node" (`pin/ls --type=recursive`): a recursive pin is the
//   node's guarantee that every block is local, it is answered from the pin index without any
//   network fetch, and everything Hearth stores is pinned.
import { create, type KuboRPCClient } from 'kubo-rpc-client'
import { HearthError, isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { KUBO_ADD_OPTIONS, canonicalCid, cidOfBytes, parseCid } from './cid.js'
import type { StorageHealth, StorageBackend } from './types.js'
import { checkKuboOptions, displayUrl } from './kubo-options.js'
import { errorMessage } from './backend-errors.js'

export interface KuboStorageOptions {
  /** RPC API address: `http://127.0.0.1:5001` (the `/api/v0` path is implied) or a multiaddr. */
  url: string
  /** Extra request headers, e.g. `{ authorization: 'Basic …' }` for a node behind an auth proxy. */
  headers?: Record<string, string>
  /** Deadline of one RPC request, in milliseconds. */
  timeoutMs?: number
  logger?: Logger
}

/** How much earlier than our own deadline the node is asked to give up on a content search. */
const SERVER_DEADLINE_MARGIN_MS = 1_000
const HEALTH_TIMEOUT_MS = 5_000

export function createKuboStorage (opts: KuboStorageOptions): StorageBackend {
  const { url, timeoutMs } = checkKuboOptions(opts)
  const client = create({ url, headers: opts.headers ?? {} })
  return new KuboStorage(client, displayUrl(url), timeoutMs, opts.logger)
}

class KuboStorage implements StorageBackend {
  readonly kind = 'kubo' as const
  #stopped = false

  constructor (
    private readonly client: KuboRPCClient,
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly logger?: Logger
  ) {}

  async add (bytes: Uint8Array, opts: { signal?: AbortSignal } = {}): Promise<string> {
    if (!(bytes instanceof Uint8Array)) throw new HearthError('INVALID_ARGUMENT', 'storage add expects bytes')
    const [expected, stored] = await Promise.all([
      cidOfBytes(bytes),
      this.#call('add', opts.signal, this.timeoutMs, undefined, async (signal) => {
        const result = await this.client.add(bytes, { ...KUBO_ADD_OPTIONS, pin: true, signal })
        return canonicalCid(result.cid)
      })
    ])
    if (stored !== expected) {
      // The node imported with other settings than asked (e.g. a Kubo whose Import.* config or
      // profile overrides link counts): its CID would not be the one every IPFS node computes.
      await this.unpin(stored).catch(() => {})
      throw new HearthError('STORAGE_VERIFY_FAILED',
        `the Kubo node at ${this.url} stored the bytes as ${stored} instead of ${expected}: check its Import settings`,
        { backend: 'kubo', url: this.url, expected, got: stored })
    }
    // Kubo sends the file's line before it writes the pin; a node killed in between leaves an
    // answer that kubo-rpc-client takes for a success (6 of 30 kill rounds in a stress of this
    // test's kind lost such a pin; raw HTTP saw the cut-off answer every time). So the pin is
    // confirmed before the CID is: a node that did not keep it is unavailable, and the add retried.
    if (!await this.has(stored)) {
      throw new HearthError('STORAGE_UNAVAILABLE', `the Kubo node at ${this.url} did not keep the pin of ${stored}`, { backend: 'kubo', url: this.url, op: 'add', cid: stored })
    }
    return stored
  }

  async pin (cid: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    const parsed = parseCid(cid)
    await this.#call('pin', opts.signal, this.timeoutMs, parsed.toString(), async (signal) => {
      await this.client.pin.add(parsed, { recursive: true, signal, timeout: this.#serverDeadline() })
    })
  }

  async get (cid: string, opts: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    const parsed = parseCid(cid)
    return await this.#call('get', opts.signal, this.timeoutMs, parsed.toString(), async (signal) => {
      const chunks: Uint8Array[] = []
      let length = 0
      for await (const chunk of this.client.cat(parsed, { signal, timeout: this.#serverDeadline() })) {
        chunks.push(chunk)
        length += chunk.length
      }
      const out = new Uint8Array(length)
      let offset = 0
      for (const c of chunks) { out.set(c, offset); offset += c.length }
      return out
    })
  }

  async has (cid: string): Promise<boolean> {
    let parsed
    try { parsed = parseCid(cid) } catch { return false }
    return await this.#call('has', undefined, this.timeoutMs, parsed.toString(), async (signal) => {
      try {
        for await (const pin of this.client.pin.ls({ paths: [parsed], type: 'recursive', signal })) {
          if (pin.cid.equals(parsed) || canonicalCid(pin.cid) === canonicalCid(parsed)) return true
        }
        return false
      } catch (err) {
        if (/not pinned/i.test(errorMessage(err))) return false
        throw err
      }
    })
  }

  async unpin (cid: string): Promise<void> {
    const parsed = parseCid(cid)
    await this.#call('unpin', undefined, this.timeoutMs, parsed.toString(), async (signal) => {
      try {
        await this.client.pin.rm(parsed, { recursive: true, signal })
      } catch (err) {
        // Unknown or only indirectly pinned (part of another pinned DAG): nothing of ours to drop.
        if (/not pinned|pinned indirectly/i.test(errorMessage(err))) return
        throw err
      }
    })
  }

  async peerAddresses (): Promise<string[]> {
    const id = await this.#call('id', undefined, this.timeoutMs, undefined, async (signal) => await this.client.id({ signal }))
    const peer = id.id.toString()
    return id.addresses.map((a) => a.toString()).map((a) => a.includes('/p2p/') ? a : `${a}/p2p/${peer}`)
  }

  async health (): Promise<StorageHealth> {
    try {
      const deadline = Math.min(this.timeoutMs, HEALTH_TIMEOUT_MS)
      const v = await this.#call('health', undefined, deadline, undefined,
        async (signal) => await this.client.version({ signal }))
      // the repository's size is extra: a node that cannot tell it is still healthy
      const stat = await this.#call('health', undefined, deadline, undefined,
        async (signal) => await this.client.repo.stat({ signal })).catch(() => null)
      const bytes = stat?.repoSize !== undefined ? Number(stat.repoSize) : null
      const version = String(v.version ?? 'unknown')
      return { ok: true, detail: `Kubo RPC at ${this.url} (version ${version})`, bytes, version }
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : `Kubo RPC at ${this.url} is unreachable` }
    }
  }

  async stop (): Promise<void> {
    // The client holds no resources of its own (requests go through the global fetch dispatcher).
    this.#stopped = true
  }

  /** The node's own deadline for a content search, a little inside ours (kubo-rpc-client sends `timeout=<n>ms`). */
  #serverDeadline (): number {
    return Math.max(this.timeoutMs - SERVER_DEADLINE_MARGIN_MS, Math.ceil(this.timeoutMs / 2))
  }

  async #call<T> (op: string, callerSignal: AbortSignal | undefined, timeoutMs: number, cid: string | undefined,
    fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#stopped) throw new HearthError('STORAGE_UNAVAILABLE', 'kubo storage is stopped', { backend: 'kubo' })
    callerSignal?.throwIfAborted()
    const deadline = AbortSignal.timeout(timeoutMs)
    const signal = callerSignal === undefined ? deadline : AbortSignal.any([callerSignal, deadline])
    try {
      return await fn(signal)
    } catch (err) {
      if (callerSignal?.aborted === true) throw callerSignal.reason
      throw this.#translate(err, op, cid, deadline.aborted, timeoutMs)
    }
  }

  #translate (err: unknown, op: string, cid: string | undefined, deadlinePassed: boolean, timeoutMs: number): HearthError {
    if (isHearthError(err)) return err
    const details = { backend: 'kubo', url: this.url, op, ...(cid !== undefined ? { cid } : {}) }
    if (deadlinePassed) {
      return new HearthError('STORAGE_UNAVAILABLE', `Kubo RPC at ${this.url} did not answer ${op} within ${timeoutMs} ms`, details)
    }
    const message = errorMessage(err)
    const status = (err as { response?: { status?: number } })?.response?.status
    if (status === 401 || status === 403) {
      return new HearthError('STORAGE_UNAVAILABLE', `Kubo RPC at ${this.url} refused the request (HTTP ${status}): check storage.kubo.headers`, details)
    }
    // The node answered but could not find the content: Kubo says "not found"/"could not find",
    // or runs into the server-side deadline we gave it ("context deadline exceeded"; other
    // Kubo-RPC nodes say "request timed out").
    if (cid !== undefined && (op === 'get' || op === 'pin') &&
      ((err as Error)?.name === 'TimeoutError' || /not found|could not find|no link named|request timed out|deadline exceeded/i.test(message))) {
      return new HearthError('STORAGE_NOT_FOUND', `content not found on the Kubo node at ${this.url}: ${cid}`, details)
    }
    const netCode = networkErrorCode(err)
    if (netCode !== undefined || status === undefined) {
      this.logger?.debug({ op, url: this.url, code: netCode }, 'kubo RPC unreachable')
      return new HearthError('STORAGE_UNAVAILABLE',
        `Kubo RPC at ${this.url} is unreachable${netCode !== undefined ? ` (${netCode})` : ''}`, { ...details, ...(netCode !== undefined ? { reason: netCode } : {}) })
    }
    this.logger?.warn({ op, url: this.url, status, message: message.slice(0, 300) }, 'kubo RPC request failed')
    return new HearthError('STORAGE_UNAVAILABLE', `Kubo RPC at ${this.url} failed ${op} (HTTP ${status}): ${message.slice(0, 200)}`, details)
  }
}

/** The socket-level reason a request never reached the node (ECONNREFUSED, ECONNRESET, ...). */
function networkErrorCode (err: unknown): string | undefined {
  let e: unknown = err
  for (let depth = 0; depth < 4 && e != null; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code
    e = (e as { cause?: unknown }).cause
  }
  return (err as Error)?.name === 'TypeError' && /fetch failed/i.test(errorMessage(err)) ? 'fetch failed' : undefined
}
