// `hearth status` for a person: one line per thing an owner asks about (files, storage, chain,
// devices, upstream, schemas), then what needs attention with its reasons. Pure: it renders the
// daemon's GET /v1/status answer (and the schema list); `--verbose` adds every part's counters.
import { serviceLine } from './commands/storage-pins.js'
import { plural } from './text.js'

type Status = Record<string, any>

function line (label: string, value: string): string {
  return `${label.padEnd(10)} ${value}\n`
}

function bytes (n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let v = n
  let u = -1
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++ }
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[u]!}`
}

function ago (ms: number | null | undefined): string {
  if (ms == null) return 'never'
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000))
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.round(s / 60)}m ago` : s < 172800 ? `${Math.round(s / 3600)}h ago` : `${Math.round(s / 86400)}d ago`
}

const STATE_ORDER = ['stored', 'registered', 'waiting-storage', 'waiting-schema', 'rejected']

function filesLine (files: Status | null): string {
  if (files === null) return 'unknown: the index cannot be read'
  const parts = STATE_ORDER.filter((state) => (files.counts?.[state] ?? 0) > 0).map((state) => `${String(files.counts[state])} ${state}`)
  return `${plural(Number(files.total ?? 0), 'file')}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`
}

function chainLine (chain: Status | undefined): string {
  if (chain === undefined) return 'unknown'
  if (chain.configured === false) return 'not configured: registrations wait until one is (README, "The chain")'
  const net = chain.network as Status | undefined
  const reg = (chain.registrations ?? {}) as Status
  if (net === undefined) return 'connecting'
  const reach = net.reachable === true ? `chain ${String(net.chainId)} reachable, block ${String(net.blockNumber)}` : `chain ${String(net.chainId)} UNREACHABLE${net.error != null ? ` (${String(net.error)})` : ''}`
  return `${reach}; ${String(reg.pending ?? 0)} to register, ${String(reg.waitingConfirmations ?? 0)} awaiting confirmation${Number(reg.parked ?? 0) > 0 ? `, ${String(reg.parked)} parked` : ''}`
}

function devicesLine (sync: Status | undefined): string {
  if (sync?.enabled !== true) return 'sync disabled (this device only)'
  const peers = (sync.peers ?? []) as Status[]
  if (peers.length === 0) return 'no other device yet (`hearth peers` shows how to add one)'
  const connected = peers.filter((p) => p.connected === true).length
  const last = Math.max(0, ...peers.map((p) => Number(p.lastSyncAt ?? 0)))
  return `${connected} of ${plural(peers.length, 'device')} connected, last sync ${ago(last === 0 ? null : last)}`
}

function upstreamLine (up: Status | undefined): string {
  if (up === undefined || up.configured !== true) return 'not configured'
  const reach = up.upstream?.reachable === true ? 'reachable' : up.upstream?.reachable === false ? `UNREACHABLE${up.upstream.lastError != null ? ` (${String(up.upstream.lastError)})` : ''}` : 'not asked yet'
  const auth = up.auth?.present !== true ? 'not logged in' : up.auth.expired === true ? 'login EXPIRED' : 'logged in'
  return `${String(up.baseUrl)} ${reach}, ${auth}`
}

function schemasLine (schemas: Array<{ source?: string }> | null, sources: Status[]): string {
  const remote = sources.length === 0 ? 'no remote source (shipped and added schemas only)' : sources.map((s) => `${String(s.name)} ${s.ok === false ? 'FAILING' : 'ok'}`).join(', ')
  if (schemas === null) return remote
  const shipped = schemas.filter((s) => s.source === 'shipped').length
  return `${String(schemas.length)} installed (${shipped} shipped); ${remote}`
}

/** What needs the owner, most severe first; each entry a headline and its detail lines. */
export function attention (s: Status): Array<{ what: string, details: string[] }> {
  const out: Array<{ what: string, details: string[] }> = []
  if (s.index?.status === 'damaged') out.push({ what: `index DAMAGED since ${String(s.index.since)}: ${String(s.index.message)}; ${String(s.index.repair ?? '')}`, details: [] })
  if (s.storage?.ok !== true) out.push({ what: `storage (${String(s.storage?.backend)}) is unavailable: ${String(s.storage?.detail ?? '')}`, details: [] })
  if (s.storage?.presence?.state === 'damaged') out.push({ what: `storage damaged: ${String(s.storage.presence.missing)} stored file(s) have lost their ciphertext; ${String(s.storage.presence.repair ?? '')}`, details: [] })
  for (const problem of (s.sync?.problems ?? []) as string[]) out.push({ what: `PROBLEM: ${problem}`, details: [] })
  const rejected = (s.rejected ?? []) as Array<{ path: string, errorCode?: string, reasons?: string[] }>
  const rejectedCount = Number(s.files?.counts?.rejected ?? rejected.length)
  if (rejectedCount > 0) {
    out.push({ what: `${plural(rejectedCount, 'rejected file')} in the data folder (fix one and it is ingested; delete it and it is forgotten)`, details: [] })
    for (const r of rejected) out.push({ what: `  ${r.path}  ${r.errorCode ?? ''}`, details: (r.reasons ?? []).slice(0, 5) })
    if (rejected.length < rejectedCount) out.push({ what: `  …and ${rejectedCount - rejected.length} more (\`hearth status --json\`)`, details: [] })
  }
  const waiting = (s.waiting ?? []) as Array<{ path: string }>
  if (waiting.length > 0) out.push({ what: `${plural(Number(s.files?.counts?.['waiting-schema'] ?? waiting.length), 'file')} waiting for a schema (\`hearth schema add\`)`, details: waiting.slice(0, 10).map((w) => w.path) })
  const forStorage = Number(s.ingest?.waitingForStorage ?? 0)
  if (forStorage > 0) out.push({ what: `${plural(forStorage, 'file')} waiting for storage, retried until it answers`, details: [] })
  const peerWaiting = Number(s.sync?.waitingForSchema?.count ?? 0)
  if (peerWaiting > 0) out.push({ what: `${plural(peerWaiting, 'file')} from other devices waiting for their schema (\`hearth ls\` lists them)`, details: [] })
  if (s.upstream?.auth?.expired === true) out.push({ what: 'the conversation/image service login expired: `hearth login`', details: [] })
  const requests = Number(s.builders?.pendingRequests ?? 0)
  if (requests > 0) out.push({ what: `${plural(requests, 'access request')} from builders waiting for you (\`hearth requests\`)`, details: [] })
  if (s.chain?.network?.reachable === false) out.push({ what: `the chain is unreachable: registrations wait (${String(s.chain.network.error ?? '')})`, details: [] })
  return out
}

/** The short summary `hearth status` prints by default. */
export function renderSummary (s: Status, schemas: { list: Array<{ source?: string }> | null, sources: Status[] }): string {
  let out = line('owner', String(s.owner))
  out += line('files', filesLine(s.files ?? null))
  out += line('storage', `${String(s.storage?.backend)} ${s.storage?.ok === true ? 'ok' : 'UNAVAILABLE'}${typeof s.storage?.version === 'string' ? ` (Kubo ${s.storage.version})` : ''}${s.storage?.presence?.state === 'damaged' ? `, damaged (${String(s.storage.presence.missing)} missing)` : ''}${typeof s.storage?.bytes === 'number' ? `, ${bytes(s.storage.bytes)} stored` : ''}`)
  for (const service of (s.pinning?.services ?? []) as Array<Parameters<typeof serviceLine>[0]>) out += line('pinning', serviceLine(service))
  out += line('chain', chainLine(s.chain))
  out += line('devices', devicesLine(s.sync))
  out += line('upstream', upstreamLine(s.upstream))
  out += line('schemas', schemasLine(schemas.list, schemas.sources))
  if (s.dashboard?.listening === true) out += line('dashboard', `${String(s.dashboard.url)} (\`hearth ui\` prints a login link)`)
  const scan = s.ingest?.scan
  if (scan !== undefined && scan.done !== true) out += line('scan', `initial scan in progress, ${String(scan.seen ?? 0)} files checked`)
  const todo = attention(s)
  if (todo.length === 0) out += '\nnothing needs your attention\n'
  else {
    out += '\nneeds attention:\n'
    for (const item of todo) {
      out += `  ${item.what}\n`
      for (const d of item.details) out += `      - ${d}\n`
    }
  }
  return out
}
