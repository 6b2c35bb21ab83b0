// Runs test/support/sync-peer.ts in a child process (optionally under a command prefix such as
// `unshare -rn`) and tracks what it reports. The child is always killed when the test ends.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

export interface PeerEvent { event: string; [k: string]: unknown }

export interface PeerProcess {
  child: ChildProcess
  events: PeerEvent[]
  /** The latest event of a kind. */
  last (event: string): PeerEvent | undefined
  /** Resolves with the first event (already seen or future) that satisfies `match`. */
  until (label: string, match: (e: PeerEvent) => boolean, timeoutMs?: number): Promise<PeerEvent>
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr (): string
}

export function peerCommand (config: Record<string, unknown>): string[] {
  return [process.execPath, '--import', 'tsx', '--import', './src/polyfill.ts', 'test/support/sync-peer.ts', JSON.stringify(config)]
}

export function spawnPeer (t: { after: (fn: () => Promise<void>) => void }, command: string[]): PeerProcess {
  const child = spawn(command[0]!, command.slice(1), { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const events: PeerEvent[] = []
  const waiters = new Set<() => void>()
  let err = ''
  child.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      events.push(JSON.parse(line) as PeerEvent)
    } catch {
      return
    }
    for (const w of waiters) w()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => { resolve({ code, signal }); for (const w of waiters) w() })
  })
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  return {
    child,
    events,
    last: (event) => events.findLast((e) => e.event === event),
    async until (label, match, timeoutMs = 60_000) {
      return await new Promise<PeerEvent>((resolve, reject) => {
        const check = (): void => {
          const found = events.find(match)
          if (found !== undefined) { done(); resolve(found); return }
          if (child.exitCode !== null || child.signalCode !== null) { done(); reject(new Error(`peer process exited while waiting for ${label}: ${err.slice(-2000)}`)) }
        }
        const timer = setTimeout(() => { done(); reject(new Error(`timed out waiting for ${label}: ${err.slice(-2000)}`)) }, timeoutMs)
        const done = (): void => { clearTimeout(timer); waiters.delete(check) }
        waiters.add(check)
        check()
      })
    },
    exited,
    stderr: () => err
  }
}
