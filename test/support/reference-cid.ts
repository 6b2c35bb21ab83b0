// The CID `ipfs add --cid-version 1` gives bytes, computed independently of src/:
// ipfs-unixfs-importer's own fixed-size chunker and balanced layout, configured as Kubo configures it.
import { importBytes } from 'ipfs-unixfs-importer'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { balanced } from 'ipfs-unixfs-importer/layout'

export async function referenceCid (bytes: Uint8Array): Promise<string> {
  let blocks = 0
  const memory = { put: async (cid: unknown) => { blocks++; return cid } }
  const { cid } = await importBytes(bytes, memory as any, {
    cidVersion: 1,
    rawLeaves: true,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: 262_144 }),
    layout: balanced({ maxChildrenPerNode: 174 })
  })
  if (blocks === 0) throw new Error('the importer wrote no block')
  return cid.toV1().toString()
}
