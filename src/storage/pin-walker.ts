// The DAG walker the embedded backend hands to Helia's pins.add/rm. Helia's default walker runs
// every block through a job queue, which made pinning a 1 KB file cost several milliseconds, more
// than importing it; this one walks depth-first in a plain loop and reads each block once
// (measured with bench/storage.ts: about three times faster per pin). Like the default it reads
// every block, so a recorded recursive pin still proves the whole DAG is on disk.
import type { GraphNode, GraphWalkerFactory } from 'helia'
import { createUnsafe } from 'multiformats/block'
import type { CID } from 'multiformats/cid'

export const sequentialWalker: GraphWalkerFactory = ({ blockstore, getCodec }) => ({
  async * walk<T = any> (root: CID, options: { depth?: number, signal?: AbortSignal } = {}): AsyncGenerator<GraphNode<T>> {
    const maxDepth = options.depth ?? Infinity
    const stack: Array<{ cid: CID, depth: number, path: CID[] }> = [{ cid: root, depth: 0, path: [root] }]
    while (stack.length > 0) {
      const { cid, depth, path } = stack.pop()!
      const parts: Uint8Array[] = []
      let length = 0
      for await (const part of blockstore.get(cid, options)) { parts.push(part); length += part.length }
      const bytes = parts.length === 1 ? parts[0] : concat(parts, length)
      const block = createUnsafe<T, number, number, 0 | 1>({ cid: cid as CID<T, number, number, 0 | 1>, bytes, codec: await getCodec(cid.code) })
      if (depth < maxDepth) {
        const links = [...block.links()].map(([, link]) => link)
        for (let i = links.length - 1; i >= 0; i--) stack.push({ cid: links[i], depth: depth + 1, path: [...path, links[i]] })
      }
      yield { block, depth, path }
    }
  }
})

function concat (parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length)
  let offset = 0
  for (const p of parts) { out.set(p, offset); offset += p.length }
  return out
}
