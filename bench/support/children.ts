// Daemons a bench starts end with the bench: a run stopped by Ctrl-C, a timeout's SIGTERM or an
// exception would otherwise leave them running on their temp homes (found twice on the shared
// machine). Normal ends still stop each daemon gracefully; this only covers the other ways out.
import type { ChildProcess } from 'node:child_process'

const running = new Set<ChildProcess>()
let hooked = false

function killAll (): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
}

/** Kills `child` when this process exits or is interrupted, unless it ended first. */
export function endsWithBench<T extends ChildProcess> (child: T): T {
  if (!hooked) {
    hooked = true
    process.once('exit', killAll)
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => { killAll(); process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1)) })
    }
  }
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}
