// Whether a folder lives on a local disk filesystem, where an unsynced write of a small file is a
// few microseconds of page-cache work: then it is cheaper done with blocking calls on the main
// thread than handed to the threadpool call by call (durable-file.ts `blocking`). On a network or
// FUSE filesystem a call can wait for a round trip, so those, and anything not recognised, keep
// the asynchronous calls. Linux only (statfs's type numbers are the kernel's magic numbers).
import { statfs } from 'node:fs/promises'

const LOCAL_TYPES = new Set([
  0xEF53, // ext2/3/4
  0x58465342, // xfs
  0x9123683E, // btrfs
  0xF2F52010, // f2fs
  0x2FC12FC1, // zfs
  0x01021994, // tmpfs
  0x858458F6, // ramfs
  0x794C7630 // overlayfs (containers; its upper layer is one of the above)
])

/** Resolves once per call; callers keep the answer (one statfs per folder and process). */
export async function isLocalFilesystem (dir: string): Promise<boolean> {
  if (process.platform !== 'linux') return false
  try {
    return LOCAL_TYPES.has(Number((await statfs(dir)).type))
  } catch {
    return false
  }
}
