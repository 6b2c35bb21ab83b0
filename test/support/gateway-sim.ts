// A trustless IPFS gateway on loopback for tests: `GET /ipfs/<cid>?format=raw` answers the raw
// block from a real embedded store that is not running (its small blocks, read from its LevelDB
// when the gateway starts, and its block files), 404 when the block is not there. A test can make it lie (every answer garbled), hang (accept the
// request and never answer), garble or leave out chosen blocks, and reads which CIDs were asked for.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import type { TestContext } from 'node:test'
import { CID } from 'multiformats/cid'
import { blockFilePath } from '../../src/storage/raw-blocks.js'
import { smallBlockKey } from '../../src/storage/small-blocks.js'
import { blockDirsOf, smallBlocksOf } from './stored-blocks.js'

export type GatewayMode = 'honest' | 'lying' | 'hanging'

export interface GatewaySim {
  url: string
  mode: GatewayMode
  /** Blocks answered 404 even when present (CID strings as requested). */
  withhold: Set<string>
  /** Blocks answered with one byte changed, whatever the mode. */
  garble: Set<string>
  /** Every CID asked for, in order. */
  requests: string[]
  /** Accept headers seen. */
  accepts: string[]
  close (): Promise<void>
}

/** `blocksDir`: the store's blocks folder, its datastore beside it (blockDirsOf). */
export async function startGatewaySim (t: Pick<TestContext, 'after'>, blocksDir: string, mode: GatewayMode = 'honest'): Promise<GatewaySim> {
  const small = await smallBlocksOf(blockDirsOf(blocksDir))
  const hanging = new Set<ServerResponse>()
  const sim: GatewaySim = { url: '', mode, withhold: new Set(), garble: new Set(), requests: [], accepts: [], close: async () => {} }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://gateway')
      const match = /^\/ipfs\/([^/]+)$/.exec(url.pathname)
      if (req.method !== 'GET' || match === null || url.searchParams.get('format') !== 'raw') {
        res.writeHead(400).end('only GET /ipfs/<cid>?format=raw')
        return
      }
      sim.requests.push(match[1]!)
      sim.accepts.push(req.headers.accept ?? '')
      if (sim.mode === 'hanging') { hanging.add(res); return }
      let cid: CID
      try { cid = CID.parse(match[1]!) } catch { res.writeHead(400).end('bad cid'); return }
      if (sim.withhold.has(match[1]!)) { res.writeHead(404).end('not here'); return }
      const kept = small.get(smallBlockKey(cid))
      const block = kept !== undefined ? Buffer.from(kept) : await readFile(blockFilePath(blocksDir, cid)).catch(() => null)
      if (block === null) { res.writeHead(404).end('not here'); return }
      if (sim.mode === 'lying' || sim.garble.has(match[1]!)) block[0] = block[0]! ^ 0xff
      res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw', 'content-length': block.byteLength })
      res.end(block)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  sim.close = async () => {
    for (const res of hanging) res.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.after(sim.close)
  return sim
}
