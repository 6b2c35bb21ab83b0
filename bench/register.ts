// Files registered per second in DataRegistry on the dev chain (anvil, automine): 1,000 files
// batched through Multicall3 (50, 100, 200 asked per transaction) versus one transaction per file.
// Run: node --import tsx bench/register.ts [files]
import '../src/polyfill.js'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import type { Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createChainClient, type FileToRegister } from '../src/chain/client.js'
import { startDevChain } from '../src/chain/dev-chain.js'
import { silentLogger } from '../src/log.js'

const FILES = Number(process.argv[2] ?? 1000)

/** Realistic URLs: ipfs:// + a CIDv1 (raw, sha-256) like the ones storage returns. */
async function fileUrls (tag: string): Promise<string[]> {
  const urls: string[] = []
  for (let i = 0; i < FILES; i++) {
    const digest = await sha256.digest(new TextEncoder().encode(`${tag}-${i}`))
    urls.push(`ipfs://${CID.createV1(raw.code, digest).toString()}`)
  }
  return urls
}

interface Variant { name: string; multicall: boolean; maxBatchSize: number }

const variants: Variant[] = [
  { name: 'multicall, 50 per tx', multicall: true, maxBatchSize: 50 },
  { name: 'multicall, 100 per tx', multicall: true, maxBatchSize: 100 },
  // 200 registrations exceed the 20M gas ceiling: the client splits each such batch in two.
  { name: 'multicall, 200 asked', multicall: true, maxBatchSize: 200 },
  { name: 'one tx per file', multicall: false, maxBatchSize: 1 }
]

const rows: Array<Record<string, string | number>> = []
for (const variant of variants) {
  // A fresh chain per variant, so every run starts from the same state.
  const chain = await startDevChain({})
  try {
    const client = createChainClient({
      config: { ...chain.config, ...(variant.multicall ? {} : { multicall: undefined }) },
      txPrivateKey: chain.accounts[1] as Hex,
      logger: silentLogger(),
      maxBatchSize: variant.maxBatchSize
    })
    const owner = privateKeyToAccount(chain.accounts[2] as Hex).address
    const files: FileToRegister[] = (await fileUrls(variant.name)).map((url) => ({ url, schemaId: 0n, owner }))
    const transactions = new Set<string>()
    const startBlock = await client.blockNumber()
    const started = performance.now()
    const outcomes = await client.registerFiles(files, { onSent: (hash) => { transactions.add(hash) } })
    const seconds = (performance.now() - started) / 1000
    const failed = outcomes.filter((o) => !o.ok).length
    if (failed > 0 || await client.filesCount() !== BigInt(FILES)) throw new Error(`${variant.name}: ${failed} registrations failed`)

    let gas = 0n
    for (const hash of transactions) {
      const receipt = await chain.rpc('eth_getTransactionReceipt', [hash]) as { gasUsed: string }
      gas += BigInt(receipt.gasUsed)
    }
    // Registering again: everything is found by fileIdByUrl, nothing is sent.
    const againStarted = performance.now()
    await client.registerFiles(files)
    const againMs = performance.now() - againStarted

    rows.push({
      variant: variant.name,
      files: FILES,
      transactions: transactions.size,
      blocks: Number(await client.blockNumber() - startBlock),
      seconds: Number(seconds.toFixed(2)),
      'files/s': Math.round(FILES / seconds),
      'gas/file': Number(gas / BigInt(FILES)),
      're-check ms': Math.round(againMs)
    })
  } finally {
    await chain.stop()
  }
}

console.log(`DataRegistry registration of ${FILES} files on anvil (automine), one client, same machine`)
console.table(rows)
