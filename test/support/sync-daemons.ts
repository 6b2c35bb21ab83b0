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

/** Every version of `scope` a daemon lists (none when the scope is unknown to it). */
export async function allVersions (d: Pick<DaemonProcess, 'request'>, scope: string): Promise<any[]> {
  const r = await d.request({ path: `/v1/data/${scope}/versions?limit=1000` })
  return r.status === 200 ? r.json.versions : []
}

/** POSTs `bodies` to `scope` with `concurrency` requests in flight; each must be stored (201). */
export async function postAll (d: Pick<DaemonProcess, 'request'>, scope: string, bodies: object[], concurrency = 8): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!
      const r = await d.request({ method: 'POST', path: `/v1/data/${scope}`, body })
      if (r.status !== 201) throw new Error(`POST ${scope}: ${r.status} ${r.body.toString()}`)
    }
  }))
}
