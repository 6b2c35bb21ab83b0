// A process's CPU time so far (user + system, every thread), from /proc: what a loaded machine
// inflates far less than wall time, so the benches print it beside their rates.
import { readdir, readFile } from 'node:fs/promises'

/** Milliseconds of CPU `pid` has used (clock ticks of 10 ms). */
export async function cpuMs (pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10 // utime, stime
}

/**
 * Longer than the ingest journal's checkpoint delay (200 ms) and the checkpoint itself (the small
 * blocks' writes, their pins, a syncfs): what POSTs cost is in a CPU time read this long after the
 * last `201`, not (at the last `201`) partly in the next measurement's.
 */
export const CHECKPOINT_SETTLE_MS = 800

/** Waits until the journal's checkpoint after the POSTs just answered has run (CHECKPOINT_SETTLE_MS). */
export async function checkpointSettled (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_SETTLE_MS))
}

/**
 * CPU milliseconds so far by thread ("main" for the process's own task, else the kernel's name
 * and task id: Node 20 names every thread "node"), and all threads' user and system time apart.
 */
export async function threadCpu (pid: number): Promise<Map<string, number>> {
  const m = new Map<string, number>()
  const add = (key: string, ms: number): void => { m.set(key, (m.get(key) ?? 0) + ms) }
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => null)
    if (stat === null) continue // a thread that ended meanwhile
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
    const [user, sys] = [Number(fields[11]) * 10, Number(fields[12]) * 10] // clock ticks of 10 ms
    add(task === String(pid) ? 'main' : `${name}/${task}`, user + sys)
    add('all threads, user', user)
    add('all threads, system', sys)
  }
  return m
}

/** What each thread used between two threadCpu reads, per unit (a request, a file), largest first. */
export function threadCpuPerUnit (before: Map<string, number>, after: Map<string, number>, units: number): string {
  return [...after].map(([k, v]) => [k, (v - (before.get(k) ?? 0)) / units] as const)
    .filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')
}
