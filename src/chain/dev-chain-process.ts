// The dev chain's anvil process, tied to the daemon that started it (README, "The chain").
// Node has no PR_SET_PDEATHSIG, and a SIGKILLed daemon cannot stop its children: anvil is run
// under a small POSIX sh guard that ends it (SIGTERM: it saves its state) when the daemon's pid is
// gone, when the guard is told to stop, or forwards anvil's own exit. The guard is anvil's parent,
// so anvil's pid cannot be reused while the guard may still signal it. Its pid is also kept in
// `anvil.pid` next to the state file: a start ends an anvil an earlier run of the same home left,
// after checking by its command line that it is anvil on this very state file.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Logger } from '../log.js'

const STOP_TIMEOUT_MS = 10_000

const GUARD = [
  'parent=$1; shift',
  '"$@" >/dev/null &',
  'a=$!',
  'echo "$a"',
  'trap \'kill -TERM "$a" 2>/dev/null\' TERM INT HUP',
  '( while kill -0 "$parent" 2>/dev/null; do sleep 1; done; kill -TERM "$a" 2>/dev/null ) &',
  'w=$!',
  // a trapped signal interrupts wait while anvil still runs (it is then saving its state): wait again
  'while :; do wait "$a"; s=$?; kill -0 "$a" 2>/dev/null || break; done',
  'kill "$w" 2>/dev/null',
  'exit "$s"'
].join('\n')

export interface AnvilProcess {
  /** The guard (anvil's parent): its exit is anvil's. */
  child: ChildProcess
  /** anvil's own pid. */
  pid: number
}

/** Spawns `binary args` under the guard watching this process; resolves once anvil's pid is known. */
export async function spawnGuardedAnvil (binary: string, args: string[]): Promise<AnvilProcess> {
  const child = spawn('/bin/sh', ['-c', GUARD, 'hearth-anvil-guard', String(process.pid), binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const pid = await new Promise<number>((resolve, reject) => {
    let out = ''
    const onData = (chunk: Buffer): void => {
      out += chunk.toString()
      const line = out.split('\n')
      if (line.length > 1) { child.stdout?.off('data', onData); resolve(Number(line[0])) }
    }
    child.stdout?.on('data', onData)
    child.once('error', reject)
    child.once('exit', (code) => { reject(new Error(`the anvil guard exited (${String(code)})`)) })
  })
  child.stdout?.resume()
  // a daemon exiting on its own (not killed) takes anvil along at once
  const killOnExit = (): void => { signal(pid, 'SIGKILL'); signal(child.pid, 'SIGKILL') }
  process.once('exit', killOnExit)
  child.once('exit', () => { process.off('exit', killOnExit) })
  return { child, pid }
}

/** SIGTERM lets anvil write its state file; SIGKILL (anvil and its guard) if it does not exit in time. */
export async function terminateAnvil (anvil: AnvilProcess): Promise<void> {
  const { child } = anvil
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  child.kill('SIGTERM')
  const timer = setTimeout(() => { signal(anvil.pid, 'SIGKILL'); child.kill('SIGKILL') }, STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

export function pidFileOf (stateDir: string): string {
  return join(stateDir, 'anvil.pid')
}

export async function writePidFile (stateDir: string, pid: number): Promise<void> {
  await writeFile(pidFileOf(stateDir), `${pid}\n`)
}

export async function removePidFile (stateDir: string): Promise<void> {
  await rm(pidFileOf(stateDir), { force: true })
}

/**
 * Ends the anvil an earlier run left on `stateFile` (its daemon SIGKILLed before this guard
 * existed, or the guard itself killed): the pid in `anvil.pid`, when that process is anvil with
 * this state file on its command line. Anything else with that pid is left alone.
 */
export async function endStaleAnvil (stateDir: string, stateFile: string, logger: Logger): Promise<boolean> {
  const pid = Number.parseInt(await readFile(pidFileOf(stateDir), 'utf8').catch(() => ''), 10)
  if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) return false
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0')
  if (argv.length < 2 || !basename(argv[0] ?? '').startsWith('anvil') || !argv.includes(stateFile)) {
    await removePidFile(stateDir)
    return false
  }
  logger.warn({ pid, stateFile }, 'ending the dev chain an earlier run of this home left running')
  signal(pid, 'SIGTERM')
  const deadline = Date.now() + STOP_TIMEOUT_MS
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  if (alive(pid)) signal(pid, 'SIGKILL')
  for (const until = Date.now() + 5_000; alive(pid) && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 50))
  await removePidFile(stateDir)
  return true
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

function signal (pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return
  try { process.kill(pid, sig) } catch { /* gone already */ }
}
