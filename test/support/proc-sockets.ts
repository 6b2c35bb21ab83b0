// A process's TCP/UDP sockets as the kernel lists them (/proc), so a test can prove a daemon it
// started opened nothing but loopback: the kernel's own view, not the daemon's.
import { readFile, readdir, readlink } from 'node:fs/promises'

export interface SocketEntry {
  table: 'tcp' | 'tcp6' | 'udp' | 'udp6'
  local: { address: string; port: number }
  remote: { address: string; port: number }
  /** Bound to loopback and, when connected, talking to loopback. */
  loopbackOnly: boolean
}

/** Every TCP/UDP socket of the process, read from /proc. */
export async function processSockets (pid: number): Promise<SocketEntry[]> {
  const inodes = new Set<string>()
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')
    const m = /^socket:\[(\d+)\]$/.exec(target)
    if (m !== null) inodes.add(m[1])
  }
  const out: SocketEntry[] = []
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '')
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 10 || !inodes.has(cols[9])) continue
      const local = parseProcAddress(cols[1])
      const remote = parseProcAddress(cols[2])
      const unconnected = remote.port === 0 && /^[0:.]+$/.test(remote.address)
      out.push({ table, local, remote, loopbackOnly: isLoopback(local.address) && (unconnected || isLoopback(remote.address)) })
    }
  }
  return out
}

/** /proc/net addresses are hex, each 32-bit word in host (little-endian) order. */
function parseProcAddress (hex: string): { address: string; port: number } {
  const [addr, port] = hex.split(':')
  const words = addr.match(/.{8}/g) ?? []
  const bytes = words.flatMap((w) => [w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => parseInt(b, 16)))
  let address: string
  if (bytes.length === 4) {
    address = bytes.join('.')
  } else if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    address = `::ffff:${bytes.slice(12).join('.')}`
  } else {
    const groups: string[] = []
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
    address = groups.join(':')
  }
  return { address, port: parseInt(port, 16) }
}

function isLoopback (address: string): boolean {
  return address.startsWith('127.') || address.startsWith('::ffff:127.') || address === '0:0:0:0:0:0:0:1'
}
