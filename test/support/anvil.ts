// A real anvil dev chain per test (docs/protocol.md §2.5: tests run on a local chain), stopped when the test ends.
import type { TestContext } from 'node:test'
import type { Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createChainClient, type ChainClient, type ChainClientOptions } from '../../src/chain/client.js'
import type { ChainConfig } from '../../src/chain/config.js'
import { startDevChain, type DevChain, type StartDevChainOptions } from '../../src/chain/dev-chain.js'
import { silentLogger } from '../../src/log.js'

export async function startTestChain (t: Pick<TestContext, 'after'>, opts: StartDevChainOptions = {}): Promise<DevChain> {
  const chain = await startDevChain(opts)
  t.after(async () => { await chain.stop() })
  return chain
}

/** A client on the dev chain; account 1 is the daemon's tx key unless told otherwise. */
export function testChainClient (chain: DevChain, opts: Partial<Omit<ChainClientOptions, 'config'>> & { config?: Partial<ChainConfig> } = {}): ChainClient {
  return createChainClient({
    logger: silentLogger(),
    txPrivateKey: chain.accounts[1] as Hex,
    ...opts,
    config: { ...chain.config, ...opts.config }
  })
}

export function addressOf (privateKey: Hex): `0x${string}` {
  return privateKeyToAccount(privateKey).address
}

