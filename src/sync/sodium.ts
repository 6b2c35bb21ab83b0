// libsodium's native bindings (sodium-native), loaded once for the two ciphers of sync that use
// them: Noise's ChaCha20-Poly1305 (noise-crypto.ts) and the private network's XSalsa20 (pnet.ts).
// A prebuilt native module can be missing for a platform; then this answers null and each of them
// falls back to its pure implementation, with the same bytes on the wire.
import { createRequire } from 'node:module'

/** The part of sodium-native's API that sync uses. */
export interface Sodium {
  crypto_aead_chacha20poly1305_ietf_encrypt_detached (c: Uint8Array, mac: Uint8Array, m: Uint8Array, ad: Uint8Array | null, nsec: null, npub: Uint8Array, k: Uint8Array): number
  crypto_aead_chacha20poly1305_ietf_decrypt_detached (m: Uint8Array, nsec: null, c: Uint8Array, mac: Uint8Array, ad: Uint8Array | null, npub: Uint8Array, k: Uint8Array): void
  crypto_stream_xor_STATEBYTES: number
  crypto_stream_PRIMITIVE: string
  crypto_stream_xor_init (state: Uint8Array, nonce: Uint8Array, key: Uint8Array): void
  crypto_stream_xor_update (state: Uint8Array, output: Uint8Array, input: Uint8Array): void
  crypto_stream_xor_final (state: Uint8Array): void
}

const require = createRequire(import.meta.url)
let sodium: Sodium | null | undefined

/** sodium-native, or null when it cannot load here (then it is not tried again). */
export function loadSodium (): Sodium | null {
  if (sodium === undefined) {
    try {
      sodium = require('sodium-native') as Sodium
    } catch {
      sodium = null
    }
  }
  return sodium
}
