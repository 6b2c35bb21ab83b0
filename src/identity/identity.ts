// The owner's identity on this machine: identity/identity.json (mode 0600) holding the master
// signature (docs/protocol.md §2.4) and, when Hearth was given or made the wallet, its private key. The
// master signature is all the daemon needs; the private key is kept only so the owner can later
// sign chain transactions as themselves. Nothing here logs, and no error quotes a secret.
import { chmod, copyFile, constants as fsConstants } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { addressOfPrivateKey, bytesToHex, randomPrivateKey, type Hex } from '../protocol/eth.js'
import { HearthError } from '../errors.js'
import type { HomeLayout } from '../home.js'
import { masterKeyFromSignature, signMasterKey, type Address } from '../protocol/keys.js'
import { SECRET_FILE_MODE, hideSecrets, readSecretFile, writeSecretFile } from './secret-files.js'
import { parsePrivateKey, privateKeyFromMnemonic } from './wallet-input.js'

export type IdentityPaths = Pick<HomeLayout, 'identity'>

/** Where the identity comes from. Strings are the raw user input (parsed and checked here). */
export type IdentitySource =
  | { privateKey: string }
  | { mnemonic: string }
  | { signature: string }
  | { fresh: true }

export type IdentityKind = 'private-key' | 'mnemonic' | 'signature' | 'fresh'

export interface OwnerIdentity {
  ownerAddress: Address
  /** Master key material, 65 bytes. Not enumerable: never serialised or printed. */
  masterKey: Uint8Array
  /** The owner's wallet key when it was given or generated. Not enumerable. */
  ownerPrivateKey?: Hex
  kind: IdentityKind
  createdAt: string
  file: string
}

interface IdentityFileV1 {
  version: 1
  ownerAddress: Address
  signature: Hex
  privateKey?: Hex
  kind: IdentityKind
  createdAt: string
}

export function identityFile (paths: IdentityPaths): string {
  return join(paths.identity, 'identity.json')
}

export async function identityExists (paths: IdentityPaths): Promise<boolean> {
  return (await readSecretFile(identityFile(paths))) !== null
}

/**
 * Creates the identity. IDENTITY_EXISTS when one is already there, unless `force` — replacing an
 * identity changes every key, so files encrypted under the old one can no longer be read by it.
 */
export async function createIdentity (paths: IdentityPaths, source: IdentitySource, opts: { force?: boolean } = {}): Promise<OwnerIdentity & { replacedBackup?: string }> {
  const file = identityFile(paths)
  const present = await identityExists(paths)
  if (opts.force !== true && present) throw exists(file)

  const { kind, privateKey, signature } = await resolveSource(source)
  const { masterKey, ownerAddress } = await masterKeyFromSignature(signature)
  const record: IdentityFileV1 = {
    version: 1,
    ownerAddress,
    signature: bytesToHex(masterKey),
    ...(privateKey !== undefined ? { privateKey } : {}),
    kind,
    createdAt: new Date().toISOString()
  }
  // the replaced identity may hold the only copy of a wallet key: keep it beside the new one
  const replacedBackup = present ? await backUpIdentity(file) : undefined
  const written = await writeSecretFile(file, JSON.stringify(record, null, 2) + '\n', opts.force === true ? 'replace' : 'create')
  if (!written) throw exists(file)
  const identity: OwnerIdentity & { replacedBackup?: string } = toOwnerIdentity(record, masterKey, file)
  if (replacedBackup !== undefined) identity.replacedBackup = replacedBackup
  return identity
}

/** Copies identity.json to identity/identity.replaced-<time>.json (0600, never over another). */
export async function backUpIdentity (file: string): Promise<string> {
  const backup = join(dirname(file), `identity.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  await copyFile(file, backup, fsConstants.COPYFILE_EXCL)
  await chmod(backup, SECRET_FILE_MODE)
  return backup
}

/** IDENTITY_MISSING when there is none; INVALID_IDENTITY when the file is corrupt or inconsistent. */
export async function loadIdentity (paths: IdentityPaths): Promise<OwnerIdentity> {
  const file = identityFile(paths)
  const text = await readSecretFile(file)
  if (text === null) {
    throw new HearthError('IDENTITY_MISSING', `no identity in ${paths.identity}; run \`hearth init\` first`, { path: file })
  }
  const record = parseIdentityFile(text, file)
  const { masterKey, ownerAddress } = await masterKeyFromSignature(record.signature).catch((err: unknown) => {
    throw corrupt(file, err instanceof HearthError ? err.message : 'bad signature')
  })
  if (ownerAddress.toLowerCase() !== record.ownerAddress.toLowerCase()) {
    throw corrupt(file, 'ownerAddress does not match the master signature')
  }
  if (record.privateKey !== undefined) {
    let address: Address
    try {
      address = addressOfPrivateKey(parsePrivateKey(record.privateKey))
    } catch {
      throw corrupt(file, 'privateKey is not a valid private key')
    }
    if (address.toLowerCase() !== ownerAddress.toLowerCase()) throw corrupt(file, 'privateKey does not belong to ownerAddress')
  }
  return toOwnerIdentity({ ...record, ownerAddress }, masterKey, file)
}

async function resolveSource (source: IdentitySource): Promise<{ kind: IdentityKind, privateKey?: Hex, signature: string }> {
  if ('privateKey' in source) {
    const privateKey = parsePrivateKey(source.privateKey)
    return { kind: 'private-key', privateKey, signature: await signMasterKey(privateKey) }
  }
  if ('mnemonic' in source) {
    const privateKey = await privateKeyFromMnemonic(source.mnemonic)
    return { kind: 'mnemonic', privateKey, signature: await signMasterKey(privateKey) }
  }
  if ('signature' in source) return { kind: 'signature', signature: source.signature }
  if ('fresh' in source && source.fresh === true) {
    const privateKey = randomPrivateKey()
    return { kind: 'fresh', privateKey, signature: await signMasterKey(privateKey) }
  }
  throw new HearthError('INVALID_ARGUMENT', 'identity source must be one of privateKey, mnemonic, signature or fresh')
}

const KINDS: readonly IdentityKind[] = ['private-key', 'mnemonic', 'signature', 'fresh']

function parseIdentityFile (text: string, file: string): IdentityFileV1 {
  let value: unknown
  try { value = JSON.parse(text) } catch { throw corrupt(file, 'not JSON') }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(file, 'not a JSON object')
  const v = value as Record<string, unknown>
  if (v.version !== 1) throw corrupt(file, `unsupported version ${JSON.stringify(v.version)}`)
  if (typeof v.signature !== 'string') throw corrupt(file, 'signature missing')
  if (typeof v.ownerAddress !== 'string') throw corrupt(file, 'ownerAddress missing')
  if (v.privateKey !== undefined && typeof v.privateKey !== 'string') throw corrupt(file, 'privateKey is not a string')
  const kind = KINDS.includes(v.kind as IdentityKind) ? v.kind as IdentityKind : (v.privateKey === undefined ? 'signature' : 'private-key')
  return {
    version: 1,
    ownerAddress: v.ownerAddress as Address,
    signature: v.signature as Hex,
    ...(typeof v.privateKey === 'string' ? { privateKey: v.privateKey as Hex } : {}),
    kind,
    createdAt: typeof v.createdAt === 'string' ? v.createdAt : ''
  }
}

function toOwnerIdentity (record: IdentityFileV1, masterKey: Uint8Array, file: string): OwnerIdentity {
  const identity: OwnerIdentity = {
    ownerAddress: record.ownerAddress,
    masterKey,
    ...(record.privateKey !== undefined ? { ownerPrivateKey: record.privateKey } : {}),
    kind: record.kind,
    createdAt: record.createdAt,
    file
  }
  return hideSecrets(identity, ['masterKey', 'ownerPrivateKey'])
}

function exists (file: string): HearthError {
  return new HearthError('IDENTITY_EXISTS', `an identity already exists at ${file}; use --force to replace it (files encrypted under it become unreadable to the new one)`, { path: file })
}

function corrupt (file: string, reason: string): HearthError {
  return new HearthError('INVALID_IDENTITY', `identity file ${file} is invalid: ${reason}`, { path: file, reason })
}
