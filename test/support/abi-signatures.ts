// Canonical text of an ABI, for comparing what the compiled contracts expose with the ABIs the
// client uses (names included: they are part of the decoded shape).
import type { Abi, AbiParameter } from 'viem'

function param (p: AbiParameter): string {
  const tuple = 'components' in p ? `(${p.components.map(param).join(',')})` : ''
  return `${tuple === '' ? p.type : p.type.replace('tuple', tuple)} ${p.name ?? ''}`.trim()
}

export function abiSignatures (abi: Abi): string[] {
  return abi.flatMap((item) => {
    if (item.type === 'function') return [`function ${item.name}(${item.inputs.map(param).join(',')}) ${item.stateMutability} -> ${item.outputs.map(param).join(',')}`]
    if (item.type === 'event') return [`event ${item.name}(${item.inputs.map((i) => `${param(i)}${i.indexed === true ? ' indexed' : ''}`).join(',')})`]
    if (item.type === 'error') return [`error ${item.name}(${item.inputs.map(param).join(',')})`]
    return []
  }).sort()
}
