// One daemon per home. The lock file holds the owner's pid; a lock whose pid is gone (a crash,
// SIGKILL) is stale and taken over, so a crash never blocks a restart.
import { open, readFile, unlink, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { HearthError } from '../errors.js'

export interface DaemonLock { path: string; release (): Promise<void> }

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function holderPid (path: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(path, 'utf8')).trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

export async function acquireDaemonLock (path: string): Promise<DaemonLock> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600)
      await fh.writeFile(`${process.pid}\n`)
      await fh.close()
      let released = false
      return {
        path,
        async release () {
          if (released) return
          released = true
          if (await holderPid(path) === process.pid) await unlink(path).catch(() => {})
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = await holderPid(path)
      if (pid !== null && pid !== process.pid && alive(pid)) {
        throw new HearthError('DAEMON_LOCKED', `another Hearth daemon (pid ${pid}) is already running on this home (lock ${path})`, { pid })
      }
      // stale: its process is gone (or the file is empty from a crash mid-write)
      await unlink(path).catch(() => {})
    }
  }
  throw new HearthError('DAEMON_LOCKED', `could not take the daemon lock ${path}`)
}
