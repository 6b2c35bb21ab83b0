// The daemon's first service: the home's folders (owner-only) and the one-daemon-per-home lock.
// It loads nothing heavy, so it runs before the listeners answer `/health`.
import { chmod, mkdir } from 'node:fs/promises'
import type { HomeLayout } from '../home.js'
import { service, type Service } from '../lifecycle/service.js'
import { acquireDaemonLock, type DaemonLock } from './lock.js'

export function homeService (home: HomeLayout): Service {
  let lock: DaemonLock | null = null
  return service('home', {
    async start () {
      for (const dir of [home.root, home.data, home.index, home.run, home.images]) await mkdir(dir, { recursive: true })
      await chmod(home.root, 0o700)
      lock = await acquireDaemonLock(home.lock)
    },
    async stop () { await lock?.release() }
  })
}
