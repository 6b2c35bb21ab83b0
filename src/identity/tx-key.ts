// The daemon's own transaction key (identity/tx-key.json, mode 0600): it pays for and sends chain
// writes, so the owner's wallet key never has to live on an always-on machine. Created on first
// use and kept when the owner identity is replaced.
import { join } from 'node:path'
import { addressOfPrivateKey, randomPrivateKey, type Hex } from '../protocol/eth.js'
import { HearthError } from '../errors.js'
import type { Address } from '../protocol/keys.js'
import type { IdentityPaths } from './identity.js'
import { hideSecrets, readSecretFile, writeSecretFile } from './secret-files.js'
import { parsePrivateKey } from './wallet-input.js'

export interface TxKey {
  address: Address
  /** Not enumerable: never serialised or printed. */
  privateKey: Hex
}

export function txKeyFile (paths: IdentityPaths): string {
  return join(paths.identity, 'tx-key.json')
}

/** The transaction key, or null when none was made yet. INVALID_IDENTITY when the file is corrupt. */
export async function loadTxKey (paths: IdentityPaths): Promise<TxKey | null> {
  const file = txKeyFile(paths)
  const text = await readSecretFile(file)
  if (text === null) return null
  let privateKey: Hex
  try {
    const value = JSON.parse(text) as { version?: unknown, privateKey?: unknown }
    if (value.version !== 1 || typeof value.privateKey !== 'string') throw new Error('shape')
    privateKey = parsePrivateKey(value.privateKey)
  } catch {
    throw new HearthError('INVALID_IDENTITY', `transaction key file ${file} is invalid`, { path: file })
  }
  return toTxKey(privateKey)
}

/** The transaction key, generated and stored on first call. Concurrent first calls agree on one key. */
export async function loadOrCreateTxKey (paths: IdentityPaths): Promise<TxKey> {
  const existing = await loadTxKey(paths)
  if (existing !== null) return existing
  const privateKey = randomPrivateKey()
  const address = addressOfPrivateKey(privateKey)
  const record = { version: 1, address, privateKey, createdAt: new Date().toISOString() }
  const written = await writeSecretFile(txKeyFile(paths), JSON.stringify(record, null, 2) + '\n', 'create')
  if (written) return toTxKey(privateKey)
  const winner = await loadTxKey(paths)
  if (winner === null) throw new HearthError('INTERNAL', 'transaction key vanished while it was being created')
  return winner
}

function toTxKey (privateKey: Hex): TxKey {
  return hideSecrets({ address: addressOfPrivateKey(privateKey), privateKey }, ['privateKey'])
}
