// Turns viem's (very long) errors into the two chain failures Hearth reports: the chain could not
// be reached or did not take the transaction (CHAIN_UNAVAILABLE: retry later), or a contract
// reverted (CHAIN_REVERTED: retrying the same call will fail the same way).
import {
  BaseError, ContractFunctionRevertedError, decodeErrorResult, HttpRequestError, TimeoutError,
  type Hex
} from 'viem'
import { HearthError } from '../errors.js'
import { registryErrorsAbi } from './abi.js'

export interface DecodedRevert {
  /** The Solidity error name (`FileUrlAlreadyUsed`, `InvalidSchemaId`, `Error`, `Panic`), or null when undecodable. */
  errorName: string | null
  args: unknown[]
  /** Raw revert data, for errors outside the known ABI. */
  data: Hex
}

/** Decodes revert data against the registries' errors and Solidity's Error(string)/Panic(uint256). */
export function decodeRevert (data: Hex): DecodedRevert {
  if (data === '0x') return { errorName: null, args: [], data }
  try {
    const decoded = decodeErrorResult({ abi: registryErrorsAbi, data })
    return { errorName: decoded.errorName, args: [...(decoded.args ?? [])], data }
  } catch {
    return { errorName: null, args: [], data }
  }
}

export function revertedError (action: string, revert: DecodedRevert): HearthError {
  const name = revert.errorName ?? 'unknown error'
  return new HearthError('CHAIN_REVERTED', `${action} reverted: ${name}`, {
    errorName: revert.errorName,
    args: revert.args.map((a) => typeof a === 'bigint' ? a.toString() : a),
    ...(revert.errorName === null ? { data: revert.data.slice(0, 202) } : {})
  })
}

/** The decoded revert when the failure is a contract revert; null for anything else (unreachable RPC, rejected transaction). */
export function findRevert (err: unknown): DecodedRevert | null {
  if (!(err instanceof BaseError)) return null
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError)
  if (reverted instanceof ContractFunctionRevertedError) {
    if (reverted.data !== undefined) {
      return { errorName: reverted.data.errorName, args: [...(reverted.data.args ?? [])], data: reverted.raw ?? '0x' }
    }
    return decodeRevert(reverted.raw ?? '0x')
  }
  // Plain eth_call / eth_estimateGas reverts carry the revert data on the RPC error.
  const withData = err.walk((e) => typeof (e as { data?: unknown }).data === 'string' && /^0x[0-9a-fA-F]*$/.test((e as { data: string }).data))
  const isRevert = err.walk((e) => /revert/i.test((e as Error).message ?? '')) !== null
  if (isRevert) return decodeRevert(((withData as { data?: Hex } | null)?.data) ?? '0x')
  return null
}

/** True when the RPC could not be reached at all (connection refused, timeout). */
export function isUnreachable (err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null
}

/** Maps any failure of a chain call to a HearthError with a short message. */
export function toChainError (err: unknown, action: string): HearthError {
  if (err instanceof HearthError) return err
  const revert = findRevert(err)
  if (revert !== null) return revertedError(action, revert)
  if (err instanceof BaseError) {
    return new HearthError('CHAIN_UNAVAILABLE', isUnreachable(err)
      ? `${action}: chain RPC unreachable`
      : `${action}: ${firstLine(err.shortMessage)}`, { reason: err.name })
  }
  return new HearthError('CHAIN_UNAVAILABLE', `${action}: ${firstLine(err instanceof Error ? err.message : String(err))}`)
}

function firstLine (text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}
