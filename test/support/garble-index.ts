// Garbles the data blocks of a LevelDB's table files in place, as bit rot or a stray write would:
// the footer, index and filter blocks are left alone, so LevelDB still opens the table and only
// notices when it reads a block (a running daemon has the file mapped and sees the new bytes).
import { open, readdir } from 'node:fs/promises'
import { join } from 'node:path'

/** Overwrites every data block of every `.ldb` in `dir`; returns how many tables were garbled. */
export async function garbleTableData (dir: string): Promise<number> {
  const tables = (await readdir(dir)).filter((f) => f.endsWith('.ldb'))
  for (const name of tables) {
    const file = await open(join(dir, name), 'r+')
    try {
      const { size } = await file.stat()
      const footer = Buffer.alloc(48)
      await file.read(footer, 0, 48, size - 48)
      // the footer starts with the metaindex block's handle; data blocks, then the filter block, precede it
      const metaindexOffset = varint(footer)
      const filterGuess = Math.floor(metaindexOffset * 0.8) // keep the filter block: it is read at open, not per key
      await file.write(Buffer.alloc(filterGuess, 0xa5), 0, filterGuess, 0)
    } finally {
      await file.close()
    }
  }
  return tables.length
}

function varint (bytes: Buffer): number {
  let value = 0
  for (let i = 0, shift = 1; i < 10; i++, shift *= 128) {
    const b = bytes[i]!
    value += (b & 0x7f) * shift
    if (b < 0x80) return value
  }
  throw new Error('bad varint in a table footer')
}
