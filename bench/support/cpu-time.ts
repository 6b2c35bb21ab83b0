// A process's CPU time so far (user + system, every thread), from /proc: what a loaded machine
// inflates far less than wall time, so the benches print it beside their rates.
import { readFile } from 'node:fs/promises'

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
