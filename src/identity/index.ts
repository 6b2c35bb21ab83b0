// The identity folder's public interface.
export { createIdentity, identityExists, identityFile, loadIdentity } from './identity.js'
export type { IdentityKind, IdentityPaths, IdentitySource, OwnerIdentity } from './identity.js'
export { loadOrCreateTxKey, loadTxKey, txKeyFile } from './tx-key.js'
export type { TxKey } from './tx-key.js'
export { readSecret } from './wallet-input.js'
export type { SecretSource } from './wallet-input.js'
