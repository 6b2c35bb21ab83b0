// `hearth status`: what the daemon is doing.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, writeJson } from '../output.js'
import { renderTree } from '../text.js'
import { renderSummary } from '../status-summary.js'
import { waitingLine, type WaitingForSchema } from './sync.js'

const STATUS_USAGE = `usage: hearth status [--verbose | --json]
  files by state, storage, chain, devices, upstream and schemas, then what needs your attention
  --verbose  also every part's counters: ingest and workers, memory, sync details, builders
  --json     the daemon's whole answer (GET /v1/status)`

function line (label: string, value: string): string {
  return `${label.padEnd(10)} ${value}\n`
}

export const statusCommand: Command = {
  name: 'status',
  usage: STATUS_USAGE,
  async run (ctx) {
    return await guarded(ctx, STATUS_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' }, verbose: { type: 'boolean', short: 'v' } } })
      const s = await callDaemon(ctx, { path: '/v1/status' })
      if (values.json === true) { writeJson(ctx, s); return EXIT.OK }
      if (s.status === 'starting') {
        // answered before the index and the parts are up (README: start-up, /health first)
        const started = Array.isArray(s.started) ? (s.started as string[]).join(', ') : ''
        ctx.stdout.write(line('owner', String(s.owner ?? 'not loaded yet')) + line('daemon', `starting ${String(s.starting ?? '')} (up: ${started}), ${String(s.uptimeMs)} ms since start`))
        return EXIT.OK
      }
      // asked only once the daemon is up: while it starts, /v1/schemas would wait at the starting gate
      const schemas = await callDaemon(ctx, { path: '/v1/schemas' }).catch(() => null)
      const schemaList = { list: Array.isArray(schemas?.schemas) ? schemas.schemas : null, sources: Array.isArray(s.schemaSources) ? s.schemaSources : [] }
      if (values.verbose !== true) {
        ctx.stdout.write(renderSummary(s, schemaList) + '\n`hearth status --verbose` adds every part\'s counters, `--json` the whole answer\n')
        return EXIT.OK
      }
      let out = renderSummary(s, schemaList) + '\ndetails:\n'
      const ingest = s.ingest ?? {}
      const scan = ingest.scan ?? {}
      out += line('ingest', `${String(ingest.queued ?? 0)} queued, ${String(ingest.running ?? 0)} running, ${String(ingest.waitingForStorage ?? 0)} waiting for storage, initial scan ${scan.done === true ? 'done' : 'in progress'} (${String(scan.seen ?? 0)} seen)`)
      const lost = s.storage.presence?.state === 'damaged' ? `; damaged (${String(s.storage.presence.missing)} missing): ${String(s.storage.presence.repair ?? '')}` : ''
      out += line('storage', `${String(s.storage.backend)} ${s.storage.ok === true ? 'ok' : `UNAVAILABLE: ${String(s.storage.detail ?? '')}`}${lost}`)
      const sync = s.sync as Record<string, any> | undefined
      if (sync !== undefined && sync.enabled === true) {
        const peers = (sync.peers ?? []) as Array<Record<string, unknown>>
        out += line('sync', `peer ${String(sync.peerId)}, ${peers.filter((p) => p.connected === true).length} of ${peers.length} device(s) connected`)
        for (const problem of (sync.problems ?? []) as string[]) out += `           PROBLEM: ${problem}\n`
        if (sync.waitingForSchema?.count > 0) out += `           ${waitingLine(sync.waitingForSchema as WaitingForSchema)}\n`
      } else if (sync !== undefined) out += line('sync', 'disabled')
      const proc = s.process as { node?: string, flags?: string[], memory?: Record<string, number> } | undefined
      if (proc?.memory !== undefined) {
        const mb = (bytes: number | undefined): string => ((bytes ?? 0) / 1048576).toFixed(0)
        out += line('memory', `${mb(proc.memory.rss)} MB resident, V8 heap ${mb(proc.memory.heapUsed)} of ${mb(proc.memory.heapTotal)} MB (node ${String(proc.node)}${(proc.flags ?? []).map((f) => ` ${f}`).join('')})`)
      }
      const shown = new Set(['owner', 'index', 'files', 'ingest', 'storage', 'rejected', 'waiting', 'version', 'sync', 'process', 'schemaSources'])
      for (const [name, part] of Object.entries(s as Record<string, unknown>)) {
        if (shown.has(name)) continue
        out += renderTree({ [name]: part }, '')
      }
      if (sync?.enabled === true) out += `sync details:\n${renderTree({ addresses: sync.addresses, stats: sync.stats, restore: sync.restore }, '  ')}`
      ctx.stdout.write(out)
      return EXIT.OK
    })
  }
}
