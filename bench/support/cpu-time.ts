// A process's CPU time so far (user + system, every thread), from /proc: what a loaded machine
// inflates far less than wall time, so the benches print it beside their rates.
import { readFile } from 'node:fs/promises'

/** Milliseconds of CPU `pid` has used (clock ticks of 10 ms). */
export async function cpuMs (pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10 // utime, stime
}
