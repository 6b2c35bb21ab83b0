// `hearth storage pins`: what each pinning service (pinning.services) holds, per CID, from the
// running daemon: a summary line per service, then the CIDs (optionally of one state).
import { parseArgs } from 'node:util'
import type { CommandContext } from '../command.js'
import { EXIT } from '../command.js'
import { callDaemon, UsageError, writeJson } from '../output.js'

export const PINS_USAGE = `       hearth storage pins [--service NAME] [--state queued|pinning|pinned|failed|removing] [--limit N] [--json]
  pins:    each pinning service's state per CID (the daemon must be running).`

interface ServicePins { name: string; endpoint: string; counts: Record<string, number>; pending: number; lastError: string | null; reachable: boolean | null }
interface Pin { service: string; cid: string; scope: string; state: string; verified: boolean; error: string | null }

export async function runPins (ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { service: { type: 'string' }, state: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } } })
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`)
  const query = new URLSearchParams()
  if (values.service !== undefined) query.set('service', values.service)
  if (values.state !== undefined) query.set('state', values.state)
  query.set('limit', values.limit ?? '100')
  const answer = await callDaemon(ctx, { path: `/v1/storage/pins?${query.toString()}` }) as { services: ServicePins[]; pins: Pin[] }
  if (values.json === true) { writeJson(ctx, answer); return EXIT.OK }
  if (answer.services.length === 0) {
    ctx.stdout.write('no pinning service is configured (pinning.services)\n')
    return EXIT.OK
  }
  let out = ''
  for (const s of answer.services) out += `${serviceLine(s)}\n`
  for (const p of answer.pins) {
    out += `  ${p.service}  ${p.state.padEnd(8)} ${p.verified ? 'verified ' : ''}${p.cid}  ${p.scope}${p.error !== null ? `  (${p.error})` : ''}\n`
  }
  ctx.stdout.write(out)
  return EXIT.OK
}

/** `name endpoint: 3 pinned, 1 queued; 1 pending` and the last error, for status and pins. */
export function serviceLine (s: ServicePins): string {
  const counts = Object.entries(s.counts).filter(([, n]) => n > 0).map(([state, n]) => `${n} ${state}`).join(', ')
  const reach = s.reachable === false ? ', UNREACHABLE' : ''
  return `${s.name} ${s.endpoint}: ${counts === '' ? 'nothing yet' : counts}; ${s.pending} with work left${reach}${s.lastError !== null ? `; last error ${s.lastError}` : ''}`
}
