// Reading a stored version back: from the data folder when the file there is still the bytes that
// were stored, otherwise by decrypting the ciphertext (an edited or deleted file, a superseded
// version). Either way the answer is exactly what was ingested.
import { createHash } from 'node:crypto'
import { HearthError } from '../errors.js'
import type { FileRecord } from '../db/types.js'
import type { StorageBackend } from '../storage/types.js'
import { parseEnvelopeBytes, type Envelope } from '../protocol/envelope.js'
import { scopeKeyHex } from '../protocol/keys.js'
import { decryptEnvelopeBytes } from '../protocol/encryption.js'
import { readDataFileOrNull } from './data-file.js'

export async function readStoredBytes (deps: { dataDir: string; storage: StorageBackend; masterKey: Uint8Array }, record: FileRecord): Promise<Uint8Array> {
  if (!record.path.includes('#')) {
    // only a file of the recorded size can be the stored bytes: that size bounds the read
    const onDisk = await readDataFileOrNull(deps.dataDir, record.path, record.size)
    if (onDisk !== null && createHash('sha256').update(onDisk).digest('hex') === record.sha256) return onDisk
  }
  if (record.cid === null) throw new HearthError('NOT_FOUND', `${record.path} has no stored ciphertext (state ${record.state})`)
  const ciphertext = await deps.storage.get(record.cid)
  return await decryptEnvelopeBytes(ciphertext, scopeKeyHex(deps.masterKey, record.scope))
}

export async function readEnvelope (deps: { dataDir: string; storage: StorageBackend; masterKey: Uint8Array }, record: FileRecord): Promise<Envelope> {
  // what was stored passed the count limit then: a limit lowered since must not hide it
  return parseEnvelopeBytes(await readStoredBytes(deps, record), { maxValues: Infinity })
}
