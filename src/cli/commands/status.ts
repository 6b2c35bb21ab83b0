// `hearth status`: what the daemon is doing.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, writeJson } from '../output.js'
import { renderTree } from '../text.js'
import { waitingLine, type WaitingForSchema } from './sync.js'
import { serviceLine } from './storage-pins.js'

const STATUS_USAGE = 'usage: hearth status [--json]\n  counts by state, rejected files with their reasons, queues, storage, chain, sync and upstream reachability'

function line (label: string, value: string): string {
  return `${label.padEnd(10)} ${value}\n`
}

function counts (c: Record<string, number>): string {
  const parts = Object.entries(c).filter(([, n]) => n > 0).map(([state, n]) => `${n} ${state}`)
  return parts.length > 0 ? parts.join(', ') : 'none'
}

/** ` (Kubo 0.43.1, 12.3 MB)`: the node's version and size where the backend tells them. */
function storageFacts (storage: { version?: string; bytes?: number | null }): string {
  const facts: string[] = []
  if (typeof storage.version === 'string') facts.push(`Kubo ${storage.version}`)
  if (typeof storage.bytes === 'number') facts.push(`${(storage.bytes / 1048576).toFixed(1)} MB`)
  return facts.length > 0 ? ` (${facts.join(', ')})` : ''
}

export const statusCommand: Command = {
  name: 'status',
  usage: STATUS_USAGE,
  async run (ctx) {
    return await guarded(ctx, STATUS_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' } } })
      const s = await callDaemon(ctx, { path: '/v1/status' })
      if (values.json === true) { writeJson(ctx, s); return EXIT.OK }
      if (s.status === 'starting') {
        // answered before the index and the parts are up (README: start-up, /health first)
        const started = Array.isArray(s.started) ? (s.started as string[]).join(', ') : ''
        ctx.stdout.write(line('owner', String(s.owner ?? 'not loaded yet')) + line('daemon', `starting ${String(s.starting ?? '')} (up: ${started}), ${String(s.uptimeMs)} ms since start`))
        return EXIT.OK
      }
      let out = line('owner', String(s.owner))
      if (s.index?.status === 'damaged') out += line('index', `DAMAGED since ${String(s.index.since)}: ${String(s.index.message)}; ${String(s.index.repair)}`)
      out += line('files', s.files === null ? 'unknown: the index cannot be read' : `${String(s.files.total)} (${counts(s.files.counts)})`)
      const ingest = s.ingest ?? {}
      const scan = ingest.scan ?? {}
      out += line('ingest', `${String(ingest.queued ?? 0)} queued, ${String(ingest.running ?? 0)} running, ${String(ingest.waitingForStorage ?? 0)} waiting for storage, initial scan ${scan.done === true ? 'done' : 'in progress'} (${String(scan.seen ?? 0)} seen)`)
      out += line('storage', `${String(s.storage.backend)} ${s.storage.ok === true ? `ok${storageFacts(s.storage)}` : `UNAVAILABLE: ${String(s.storage.detail ?? '')}`}`)
      for (const service of (s.pinning?.services ?? []) as Parameters<typeof serviceLine>[0][]) out += line('pinning', serviceLine(service))
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
      const shown = new Set(['pinning', 'owner', 'index', 'files', 'ingest', 'storage', 'rejected', 'waiting', 'version', 'sync', 'process'])
      for (const [name, part] of Object.entries(s as Record<string, unknown>)) {
        if (shown.has(name)) continue
        out += renderTree({ [name]: part }, '')
      }
      if (sync?.enabled === true) out += `sync details:\n${renderTree({ addresses: sync.addresses, stats: sync.stats, restore: sync.restore }, '  ')}`
      if (Array.isArray(s.waiting) && s.waiting.length > 0) {
        out += 'files waiting for a schema:\n'
        for (const w of s.waiting as Array<{ path: string }>) out += `  ${w.path}\n`
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
