// The owner's private network (docs/protocol.md §3.4): libp2p's pre-shared-key protector, pnet v1,
// on the wire exactly as @libp2p/pnet and go-libp2p speak it: each side sends a random 24-byte
// nonce, then everything it sends is XORed with XSalsa20(psk, its nonce), one keystream per
// direction. A device of another owner (another key) produces garbage at the Noise handshake
// that follows, so its connection never completes.
//
// Our own implementation of that small protocol instead of @libp2p/pnet's (3.0.27), for speed
// and robustness; the framing is unchanged and test/sync/pnet.test.ts checks it against @libp2p/pnet:
// - Speed: XSalsa20 runs over every byte a sync moves, on both devices' main threads. libsodium's
//   (sodium-native, native SIMD code) measured ~3× the `xsalsa20` WebAssembly package that
//   @libp2p/pnet uses (bench/sync.ts, pnet rows). The package stays the fallback where the native
//   module cannot load (the same keystream).
// - Write batches are encrypted piece by piece into one output buffer, not concatenated first.
// - The WebAssembly package shares one memory across every connection's ciphers: a batch over
//   ~640 KB grows it and detaches every other cipher's view, and slots of connections that were
//   never finalized pile up; both end in an uncaught throw inside a socket handler. With it, every
//   update is capped at WASM_CHUNK bytes (the memory never grows) and both ciphers are finalized
//   when the connection closes. Upstream fix: libp2p/js-libp2p#3585.
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { AbstractMultiaddrConnection, byteStream } from '@libp2p/utils'
import type { AbortOptions, ConnectionProtector, MessageStream, MultiaddrConnection } from '@libp2p/interface'
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { loadSodium, type Sodium } from './sodium.js'

const NONCE_BYTES = 24
const KEY_BYTES = 32
/** Largest buffer handed to one update of the WebAssembly cipher (its memory never grows). */
const WASM_CHUNK = 64 * 1024
/** How long the nonce exchange may take when libp2p gives no deadline (@libp2p/pnet's default). */
const NONCE_TIMEOUT_MS = 1000

/** One direction's keystream: XORs `input` into `output` (same length), continuing where it stopped. */
interface StreamXor {
  update (input: Uint8Array, output: Uint8Array): void
  finalize (): void
}

export type PnetCipher = 'sodium' | 'wasm'
type XorFactory = (nonce: Uint8Array, key: Uint8Array) => StreamXor

interface WasmXsalsa { update (input: Uint8Array, output: Uint8Array): Uint8Array; finalize (): void }

const require = createRequire(import.meta.url)

/** sodium-native when its crypto_stream is XSalsa20 (every libsodium release's; checked, since the wire depends on it). */
function xsalsaSodium (): Sodium | null {
  const sodium = loadSodium()
  return sodium?.crypto_stream_PRIMITIVE === 'xsalsa20' ? sodium : null
}

function sodiumXor (sodium: Sodium): XorFactory {
  return (nonce, key) => {
    const state = new Uint8Array(sodium.crypto_stream_xor_STATEBYTES)
    sodium.crypto_stream_xor_init(state, nonce, key)
    return {
      update: (input, output) => { sodium.crypto_stream_xor_update(state, output, input) },
      finalize: () => { sodium.crypto_stream_xor_final(state) }
    }
  }
}

function wasmXor (): XorFactory {
  const xsalsa20 = require('xsalsa20') as (nonce: Uint8Array, key: Uint8Array) => WasmXsalsa
  return (nonce, key) => {
    const cipher = xsalsa20(nonce, key)
    let open = true
    return {
      update (input, output) {
        for (let off = 0; off < input.byteLength; off += WASM_CHUNK) {
          const end = Math.min(off + WASM_CHUNK, input.byteLength)
          cipher.update(input.subarray(off, end), output.subarray(off, end))
        }
      },
      finalize () { if (open) cipher.finalize(); open = false }
    }
  }
}

/** The XSalsa20 implementations usable here, fastest first. */
export function availableCiphers (): PnetCipher[] {
  return xsalsaSodium() !== null ? ['sodium', 'wasm'] : ['wasm']
}

function xorFactory (cipher: PnetCipher): XorFactory {
  if (cipher === 'wasm') return wasmXor()
  const sodium = xsalsaSodium()
  if (sodium === null) throw new HearthError('INTERNAL', 'sodium-native is not available on this platform')
  return sodiumXor(sodium)
}

/** The protected connection: the inner one with both directions XORed with their keystreams. */
class PrivateConnection extends AbstractMultiaddrConnection {
  readonly #inner: MultiaddrConnection
  #inbound: StreamXor
  #outbound: StreamXor

  constructor (inner: MultiaddrConnection, inbound: StreamXor, outbound: StreamXor, log: MessageStream['log']) {
    super({ log, remoteAddr: inner.remoteAddr, direction: inner.direction })
    this.#inner = inner
    this.#inbound = inbound
    this.#outbound = outbound
    inner.addEventListener('message', (evt) => {
      const data = evt.data
      for (const buf of data instanceof Uint8Array ? [data] : data) {
        // socket reads are this handler's own buffers: decrypted in place
        this.#inbound.update(buf, buf)
        this.onData(buf)
      }
    })
    inner.addEventListener('drain', () => { this.onMuxerDrain() })
    inner.addEventListener('close', (evt) => {
      if (evt.error != null) {
        if (evt.local) this.abort(evt.error)
        else this.onRemoteReset()
      } else this.onTransportClosed()
    })
    // finalized once, when either side goes away; data arriving later is dropped, never a throw
    this.addEventListener('close', () => {
      const ciphers = [this.#inbound, this.#outbound]
      this.#inbound = this.#outbound = CLOSED
      for (const c of ciphers) c.finalize()
    }, { once: true })
  }

  async sendClose (options?: AbortOptions): Promise<void> {
    await this.#inner.close(options)
  }

  sendData (data: Parameters<AbstractMultiaddrConnection['sendData']>[0]): ReturnType<AbstractMultiaddrConnection['sendData']> {
    // the muxer's pieces are encrypted one after another into one buffer: no concatenation first
    const out = new Uint8Array(data.byteLength)
    let off = 0
    for (const piece of data) {
      this.#outbound.update(piece, out.subarray(off, off + piece.byteLength))
      off += piece.byteLength
    }
    return { sentBytes: out.byteLength, canSendMore: this.#inner.send(out) }
  }

  sendReset (err: Error): void { this.#inner.abort(err) }
  sendPause (): void { this.#inner.pause() }
  sendResume (): void { this.#inner.resume() }
}

const CLOSED: StreamXor = { update: (_input, output) => { output.fill(0) }, finalize: () => {} }

export interface PrivateNetworkOptions {
  /** Which XSalsa20 implementation (default: the fastest available); for benches and tests. */
  cipher?: PnetCipher
}

/** A libp2p connection protector for the private network keyed with the 32-byte `networkKey`. */
export function privateNetworkProtector (networkKey: Uint8Array, logger: Logger, opts: PrivateNetworkOptions = {}): () => ConnectionProtector {
  if (!(networkKey instanceof Uint8Array) || networkKey.byteLength !== KEY_BYTES) {
    throw new HearthError('INVALID_ARGUMENT', `the private-network key must be ${KEY_BYTES} bytes`)
  }
  const key = Uint8Array.from(networkKey)
  const cipher = opts.cipher ?? availableCiphers()[0]!
  const xor = xorFactory(cipher)
  logger.debug({ cipher }, 'private network: XSalsa20 implementation')
  const protector: ConnectionProtector = {
    async protect (connection: MessageStream, options?: AbortOptions): Promise<MessageStream> {
      const log = connection.log.newScope('pnet')
      const localNonce = new Uint8Array(randomBytes(NONCE_BYTES))
      const signal = options?.signal ?? AbortSignal.timeout(NONCE_TIMEOUT_MS)
      const bytes = byteStream(connection)
      const [remote] = await Promise.all([
        bytes.read({ bytes: NONCE_BYTES, signal }),
        bytes.write(localNonce, { signal })
      ])
      const remoteNonce = remote.subarray()
      return new PrivateConnection(bytes.unwrap() as MultiaddrConnection, xor(remoteNonce, key), xor(localNonce, key), log)
    }
  }
  return () => protector
}
