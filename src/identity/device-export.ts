// Adding a device: the one file another device of the same owner needs — the owner address and
// the master signature (docs/protocol.md §2.4), from which every scope key and the private-network
// key derive. Never the wallet key, never this device's peer key, transaction key or tokens: the
// new device makes its own peer key, so two devices never share a peer id.
import { bytesToHex, type Hex } from '../protocol/eth.js'
import { HearthError } from '../errors.js'
import type { Address } from '../protocol/keys.js'
import type { OwnerIdentity } from './identity.js'

export const DEVICE_EXPORT_KIND = 'hearth-device-identity'

export interface DeviceExport {
  kind: typeof DEVICE_EXPORT_KIND
  version: 1
  ownerAddress: Address
  /** The master signature (65 bytes, hex). A secret: whoever has it reads the owner's files. */
  signature: Hex
  exportedAt: string
}

export function deviceExport (identity: OwnerIdentity): DeviceExport {
  return { kind: DEVICE_EXPORT_KIND, version: 1, ownerAddress: identity.ownerAddress, signature: bytesToHex(identity.masterKey), exportedAt: new Date().toISOString() }
}

/** Parses an export; INVALID_IDENTITY (never quoting the secret) when it is not one. */
export function parseDeviceExport (text: string, label: string): DeviceExport {
  let v: unknown
  try { v = JSON.parse(text) } catch { throw bad(label, 'not JSON') }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(label, 'not a JSON object')
  const o = v as Record<string, unknown>
  if (o.kind !== DEVICE_EXPORT_KIND) throw bad(label, `not a device export (kind must be "${DEVICE_EXPORT_KIND}"; make one with \`hearth identity export --for-device\`)`)
  if (o.version !== 1) throw bad(label, `unsupported version ${JSON.stringify(o.version)}`)
  if (typeof o.ownerAddress !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(o.ownerAddress)) throw bad(label, 'ownerAddress is missing or malformed')
  if (typeof o.signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(o.signature)) throw bad(label, 'signature is missing or malformed')
  return { kind: DEVICE_EXPORT_KIND, version: 1, ownerAddress: o.ownerAddress as Address, signature: o.signature as Hex, exportedAt: typeof o.exportedAt === 'string' ? o.exportedAt : '' }
}

function bad (label: string, reason: string): HearthError {
  return new HearthError('INVALID_IDENTITY', `${label}: ${reason}`, { reason })
}
