// Real daemons that sync with each other on loopback: their environment, a home holding an
// identity of one wallet key (no chain), and the sync address a daemon prints at start.
import { homeLayout } from '../../src/home.js'
import { createIdentity } from '../../src/identity/identity.js'
import type { DaemonProcess } from './daemon.js'
import { tempDir } from './tmp.js'

export const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

/** A temp home with the identity of `privateKey` (devices of one owner share it). */
export async function identityHome (t: Parameters<typeof tempDir>[0], privateKey: `0x${string}`): Promise<string> {
  const root = await tempDir(t, 'hearth-home-')
  await createIdentity(homeLayout(root), { privateKey })
  return root
}

export function syncAddress (d: Pick<DaemonProcess, 'output'>): string {
  return /sync\s+peer \S+ on (\S+)/.exec(d.output())![1]!
}
