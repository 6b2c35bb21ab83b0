// A daemon with its builder listener on loopback and no chain (the local registry), and test
// builders registered with it: the rig for attacks on the builder listener.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { Hex } from 'viem'
import { generatePrivateKey } from 'viem/accounts'
import { homeLayout } from '../../src/home.js'
import { createIdentity } from '../../src/identity/identity.js'
import { openDatabase } from '../../src/db/database.js'
import { startDaemonProcess, runCli, type DaemonProcess } from './daemon.js'
import { tempDir } from './tmp.js'
import { testBuilder, type TestBuilder } from './builder-client.js'

export const OWNER_KEY: Hex = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'
export const LISTEN = ['--set', 'builders.listen="127.0.0.1:0"']

/** The builder listener's port and audience, from the daemon's ready lines. */
export function endpointOf (d: DaemonProcess): { port: number; audience: string } {
  const m = /^builders {2}(\S+) {2}\(port (\d+)\)$/m.exec(d.output())
  assert.ok(m !== null, `no builder listener line in:\n${d.output()}`)
  return { audience: m[1]!, port: Number(m[2]) }
}

export interface BuilderDaemon {
  daemon: DaemonProcess
  endpoint: { port: number; audience: string }
  /** A builder with a fresh key, registered in the owner's local registry. */
  registered (): Promise<TestBuilder>
  /** A builder with a fresh key nobody registered. */
  stranger (): TestBuilder
  /** The daemon's access log, oldest first. */
  accessLog (): Promise<Array<Record<string, any>>>
}

export async function startBuilderDaemon (t: Pick<TestContext, 'after'>, opts: { args?: string[]; env?: Record<string, string> } = {}): Promise<BuilderDaemon> {
  const root = await tempDir(t, 'hearth-home-')
  await createIdentity(homeLayout(root), { privateKey: OWNER_KEY })
  const daemon = await startDaemonProcess(t, { home: root, args: [...LISTEN, ...(opts.args ?? [])], ...(opts.env !== undefined ? { env: opts.env } : {}) })
  const endpoint = endpointOf(daemon)
  return {
    daemon,
    endpoint,
    async registered () {
      const builder = testBuilder(generatePrivateKey(), endpoint)
      const reg = await runCli(daemon.home, ['builders', 'register', builder.address, '--public-key', 'pk'])
      assert.equal(reg.code, 0, reg.stderr)
      return builder
    },
    stranger: () => testBuilder(generatePrivateKey(), endpoint),
    async accessLog () {
      const r = await daemon.request({ path: '/v1/access-logs?limit=1000' })
      assert.equal(r.status, 200, JSON.stringify(r.json))
      return r.json.entries
    }
  }
}

/** How many keys a sublevel of a stopped daemon's database holds. */
export async function countStored (indexPath: string, sublevel: string[]): Promise<number> {
  const db = await openDatabase(indexPath)
  try {
    return (await db.sublevel(sublevel).keys().all()).length
  } finally {
    await db.close()
  }
}
