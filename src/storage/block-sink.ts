// The importer's block writes (durable-import.ts, staged-import.ts) handed to the file writer's
// thread without waiting for each: a put returns once its block is queued, so the importer goes on
// with the next piece as it comes instead of waiting for each batch of blocks to be written; the
// puts of one turn of the event loop go to the thread in one message, and a raw leaf's buffer (a
// piece the encryption worker moved here, used by nothing after its put) is moved on to the
// thread rather than copied. `flush` waits for every write and throws the first failure; a put
// after a failure throws it, which stops the import.
import type { CID } from 'multiformats/cid'
import { code as RAW_CODEC } from 'multiformats/codecs/raw'
import type { FileWriter } from './file-writer.js'

export interface BlockSink {
  /** Queues the block's write to `path`; with `move`, `bytes` of a raw leaf may be detached afterwards. */
  put (cid: CID, path: string, bytes: Uint8Array): void
  /** Every write queued so far, done. */
  flush (): Promise<void>
}

/**
 * `replace`: each block written whole over whatever its name holds (FileWriter.replaceBlocks); else
 * created unless there. `move`: the source's pieces were given up by its caller (a streamed add),
 * so a raw leaf that is a piece's whole buffer is moved; else every block is copied (an `add`'s
 * bytes stay the caller's).
 */
export function blockSink (writer: FileWriter, opts: { replace: boolean; move: boolean }): BlockSink {
  let leaves: Array<{ path: string; bytes: Uint8Array }> = []
  let others: Array<{ path: string; bytes: Uint8Array }> = []
  const writes: Array<Promise<void>> = []
  let failure: unknown = null
  const write = (blocks: Array<{ path: string; bytes: Uint8Array }>, move: boolean): void => {
    if (blocks.length === 0) return
    const written = opts.replace ? writer.replaceBlocks(blocks, { move }) : writer.writeBlocks(blocks, { move })
    written.catch((err: unknown) => { failure ??= err })
    writes.push(written)
  }
  const send = (): void => {
    write(leaves, opts.move)
    write(others, false)
    leaves = []
    others = []
  }
  return {
    put (cid, path, bytes) {
      if (failure !== null) throw failure
      if (leaves.length === 0 && others.length === 0) setImmediate(send)
      ;(cid.code === RAW_CODEC ? leaves : others).push({ path, bytes })
    },
    async flush () {
      send()
      await Promise.all(writes)
    }
  }
}
