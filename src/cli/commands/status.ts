// `hearth status`: what the daemon is doing.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, writeJson } from '../output.js'

const STATUS_USAGE = 'usage: hearth status [--json]\n  counts by state, rejected files with their reasons, queues, storage, chain, sync and upstream reachability'

function line (label: string, value: unknown): string {
  return `${label.padEnd(14)} ${typeof value === 'string' ? value : JSON.stringify(value)}\n`
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'show what the daemon holds and what is pending',
  usage: STATUS_USAGE,
  async run (ctx) {
    return await guarded(ctx, STATUS_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' } } })
      const s = await callDaemon(ctx, { path: '/v1/status' })
      if (values.json === true) { writeJson(ctx, s); return EXIT.OK }
      let out = line('owner', s.owner) + line('files', s.files.counts)
      out += line('ingest', `${String(s.ingest.queued)} queued, ${String(s.ingest.running)} running, scan ${s.ingest.scan.done === true ? 'done' : 'in progress'} (${String(s.ingest.scan.seen)} seen)`)
      out += line('storage', `${String(s.storage.backend)} ${s.storage.ok === true ? 'ok' : `unavailable: ${String(s.storage.detail ?? '')}`}`)
      for (const [name, part] of Object.entries(s as Record<string, unknown>)) {
        if (['owner', 'files', 'ingest', 'storage', 'rejected', 'version'].includes(name)) continue
        out += line(name, part)
      }
      if (Array.isArray(s.rejected) && s.rejected.length > 0) {
        out += 'rejected files:\n'
        for (const r of s.rejected as Array<{ path: string, errorCode?: string, reasons?: string[] }>) {
          out += `  ${r.path}  ${r.errorCode ?? ''}\n`
          for (const reason of (r.reasons ?? []).slice(0, 5)) out += `    - ${reason}\n`
        }
      }
      ctx.stdout.write(out)
      return EXIT.OK
    })
  }
}
