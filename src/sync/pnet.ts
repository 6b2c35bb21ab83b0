// The owner's private network: @libp2p/pnet's pre-shared-key protector, with two defects of the
// released version (3.0.27, the newest) worked around. Both would eventually crash the daemon.
//
// 1. Every connection's two XSalsa20 ciphers share one WebAssembly memory of the `xsalsa20`
//    package (10 pages, growable to 1000). pnet hands the cipher whole write batches; one batch
//    over ~640 KB grows the memory, which detaches the views every other cipher keeps, and each
//    of those then grows it again on its next message, however small. After one large sync
//    transfer a few hundred messages exhaust the memory and the cipher throws inside a socket
//    event handler: an uncaught exception. Fix: cap every write batch at XOR_CHUNK bytes with
//    the stream's own `maxMessageSize`, so the memory never grows. (Inbound data arrives in
//    socket reads of at most 64 KiB, under the same cap.)
// 2. pnet never calls `finalize()`, so each connection keeps two slots of the package's shared
//    cipher pool forever; after some thousands of connections (a device of another owner on the
//    LAN answering mDNS every few seconds is enough) the slots overrun the working area and
//    defect 1 follows. Fix: finalize both ciphers when the connection closes.
// Upstream fix: libp2p/js-libp2p#3585 (merged, not released). The wire format is unchanged: a
// 24-byte nonce each way, then XSalsa20 over everything, interoperable with any pnet v1 peer.
import { preSharedKey } from '@libp2p/pnet'
import type { ConnectionProtector, MessageStream } from '@libp2p/interface'
import type { Logger } from '../log.js'

/** Largest buffer handed to one XSalsa20 update. */
export const XOR_CHUNK = 64 * 1024

interface XorCipher {
  update (input: Uint8Array, output?: Uint8Array): Uint8Array
  finalize (): void
}

/** The parts of @libp2p/pnet's BoxMessageStream this module adjusts (checked at run time). */
interface BoxInternals {
  inboundXor: XorCipher
  outboundXor: XorCipher
  maxMessageSize?: number
}

/** Stands in for a finalized cipher: data arriving after close is dropped, never a throw. */
const CLOSED_CIPHER: XorCipher = { update: () => new Uint8Array(0), finalize: () => {} }

function isCipher (x: unknown): x is XorCipher {
  return typeof (x as XorCipher)?.update === 'function' && typeof (x as XorCipher)?.finalize === 'function'
}

export function privateNetworkProtector (swarmKey: Uint8Array, logger: Logger): () => ConnectionProtector {
  const makeInner = preSharedKey({ psk: swarmKey })
  let warned = false
  return () => {
    const inner = makeInner()
    return {
      async protect (connection: MessageStream, options): Promise<MessageStream> {
        const boxed = await inner.protect(connection, options)
        const box = boxed as unknown as BoxInternals
        if (!isCipher(box.inboundXor) || !isCipher(box.outboundXor)) {
          if (!warned) logger.warn('@libp2p/pnet internals changed; its memory workaround is not applied (check src/sync/pnet.ts)')
          warned = true
          return boxed
        }
        box.maxMessageSize = XOR_CHUNK
        boxed.addEventListener('close', () => {
          const { inboundXor, outboundXor } = box
          box.inboundXor = CLOSED_CIPHER
          box.outboundXor = CLOSED_CIPHER
          inboundXor.finalize()
          outboundXor.finalize()
        }, { once: true })
        return boxed
      }
    }
  }
}
