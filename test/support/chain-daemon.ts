// A daemon home and arguments for a daemon on a test chain (anvil), shared by the daemon tests.
import { homeLayout } from '../../src/home.js'
import { createIdentity } from '../../src/identity/identity.js'
import { loadOrCreateTxKey } from '../../src/identity/tx-key.js'
import type { DevChain } from '../../src/chain/index.js'
import { tempDir } from './tmp.js'

/** `--set` arguments that point a daemon at this chain's contracts (builder contracts included). */
export function chainArgs (chain: DevChain, pollIntervalMs = 200): string[] {
  return [
    '--set', 'chain.preset="custom"',
    '--set', `chain.rpcUrl="${chain.rpcUrl}"`,
    '--set', `chain.chainId=${chain.chainId}`,
    '--set', `chain.dataRegistry="${chain.contracts.dataRegistry}"`,
    '--set', `chain.dataRefinerRegistry="${chain.contracts.dataRefinerRegistry}"`,
    '--set', `chain.multicall="${chain.contracts.multicall}"`,
    '--set', `chain.dataPortabilityGrantees="${chain.contracts.dataPortabilityGrantees}"`,
    '--set', `chain.dataPortabilityPermissions="${chain.contracts.dataPortabilityPermissions}"`,
    '--set', `chain.pollIntervalMs=${pollIntervalMs}`
  ]
}

/** A home with a fresh identity whose transaction key has funds on the chain. */
export async function fundedHome (t: Parameters<typeof tempDir>[0], chain: DevChain): Promise<string> {
  const root = await tempDir(t, 'hearth-home-')
  const home = homeLayout(root)
  await createIdentity(home, { fresh: true })
  const tx = await loadOrCreateTxKey(home)
  await chain.rpc('anvil_setBalance', [tx.address, '0x56BC75E2D63100000'])
  return root
}

/** A home with the identity of this wallet key (several devices of one owner), its tx key funded. */
export async function ownerHome (t: Parameters<typeof tempDir>[0], privateKey: `0x${string}`, chain: DevChain): Promise<string> {
  const root = await tempDir(t, 'hearth-home-')
  await createIdentity(homeLayout(root), { privateKey })
  const tx = await loadOrCreateTxKey(homeLayout(root))
  await chain.rpc('anvil_setBalance', [tx.address, '0x56BC75E2D63100000'])
  return root
}
