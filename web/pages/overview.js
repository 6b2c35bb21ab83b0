// Overview: `GET /v1/status` (what `hearth status` prints), reloaded every two seconds.
import { html, useApi, Section, Facts, Table, Badge, ErrorNote, Loading, fmtAgo, fmtTime, fmtBytes, shortId, link } from '../lib.js'

const STATES = ['stored', 'registered', 'waiting-schema', 'rejected', 'deleted']

function Files ({ files }) {
  return html`<div class="counts" role="list">
    ${STATES.map((s) => html`<div class="count" role="listitem"><span class="n">${files.counts?.[s] ?? 0}</span><span class="label"><${Badge} value=${s} /></span></div>`)}
    <div class="count" role="listitem"><span class="n">${files.total ?? 0}</span><span class="label">total files</span></div>
  </div>`
}

function Ingest ({ ingest }) {
  if (ingest === undefined) return null
  const scan = ingest.scan ?? {}
  return html`<${Facts} rows=${[
    ['Queued', ingest.queued],
    ['Being stored now', ingest.running],
    ['Waiting for storage', ingest.waitingForStorage],
    ['Initial scan', scan.done ? html`done, ${scan.seen} files checked` : html`<progress max="1" aria-label="initial scan"></progress> ${scan.seen} files checked so far`]
  ]} />`
}

function Chain ({ chain }) {
  if (chain === undefined) return null
  if (chain.configured === false) return html`<p class="muted">${chain.note ?? 'No chain configured.'}</p>`
  if (chain.error !== undefined) return html`<p class="note error">${chain.error}</p>`
  const r = chain.registrations ?? {}
  const s = chain.schemaRegistrations ?? {}
  return html`<${Facts} rows=${[
    ['Network', `chain ${chain.network?.chainId ?? '?'} ${chain.network?.ok === false ? '(unreachable)' : ''}`],
    ['Registrations pending', r.pending ?? 0],
    ['Waiting for confirmations', r.waitingConfirmations ?? 0],
    ['Parked (failing, retried later)', r.parked ?? 0],
    ['Schema registrations pending', s.pending ?? 0],
    r.lastError ? ['Last error', r.lastError] : null
  ]} />`
}

function Devices ({ sync }) {
  if (sync === undefined) return null
  if (sync.enabled === false) return html`<p class="muted">Device sync is off (<code>sync.enabled</code>).</p>`
  const peers = sync.peers ?? []
  return html`
    <p>This device: <code class="wrap">${shortId(sync.peerId, 12)}</code>, ${peers.filter((p) => p.connected).length} of ${peers.length} devices online.</p>
    ${sync.waitingForSchema?.count > 0 ? html`<p class="note">${sync.waitingForSchema.count} file${sync.waitingForSchema.count === 1 ? '' : 's'} from other devices wait for their schema.</p>` : null}
    <${Table} caption="Devices" rows=${peers} rowKey=${(p) => p.peerId} empty="No other device yet." columns=${[
      { label: 'Device', cell: (p) => html`<code>${shortId(p.peerId, 8)}</code>` },
      { label: 'State', cell: (p) => html`<${Badge} value=${p.syncing ? 'syncing' : p.connected ? 'online' : 'offline'} tone=${p.connected ? 'ok' : 'muted'} />` },
      { label: 'Last sync', cell: (p) => fmtAgo(p.lastSyncAt) },
      { label: 'To receive', cell: (p) => p.pendingIn ?? '–', cls: 'num' },
      { label: 'To send', cell: (p) => p.pendingOut ?? '–', cls: 'num' }
    ]} />`
}

function Upstream ({ upstream }) {
  if (upstream === undefined) return null
  if (upstream.configured === false) return html`<p class="muted">No upstream configured (<code>upstream.baseUrl</code>).</p>`
  const auth = upstream.auth ?? {}
  return html`<${Facts} rows=${[
    ['Upstream', upstream.baseUrl],
    ['Reachable', upstream.upstream?.reachable === null ? 'not tried yet' : upstream.upstream?.reachable ? 'yes' : `no${upstream.upstream?.lastError ? `: ${upstream.upstream.lastError}` : ''}`],
    ['Logged in', auth.present ? (auth.expired ? 'token expired' : `yes${auth.email ? ` as ${auth.email}` : ''}${auth.expiresAt ? `, until ${fmtTime(auth.expiresAt)}` : ''}`) : 'no (hearth login)'],
    ['Image requests queued', upstream.queuedImages ?? 0]
  ]} />`
}

function Problems ({ rejected, waiting }) {
  return html`
    <h3>Rejected</h3>
    <${Table} caption="Rejected files" rows=${rejected} rowKey=${(r) => r.path} empty="No rejected files." columns=${[
      { label: 'File', cell: (r) => html`<code class="wrap">${r.path}</code>` },
      { label: 'Code', cell: (r) => r.errorCode ?? '–' },
      { label: 'Reasons', cell: (r) => html`<ul class="reasons">${(r.reasons ?? []).slice(0, 5).map((x) => html`<li>${String(x)}</li>`)}</ul>` }
    ]} />
    <h3>Waiting for a schema</h3>
    <${Table} caption="Files waiting for a schema" rows=${waiting} rowKey=${(r) => r.path} empty="No file is waiting for its schema." columns=${[
      { label: 'File', cell: (r) => html`<code class="wrap">${r.path}</code>` },
      { label: 'Scope', cell: (r) => r.scope },
      { label: 'Why', cell: (r) => (r.reasons ?? []).join('; ') || '–' }
    ]} />`
}

/** A pinning service (pinning.services) as one fact: its counts by state and its last error. */
function pinningRow (s) {
  const counts = Object.entries(s.counts ?? {}).filter(([, n]) => n > 0).map(([state, n]) => `${n} ${state}`).join(', ') || 'nothing yet'
  const tone = s.lastError !== null || (s.counts?.failed ?? 0) > 0 ? 'bad' : 'ok'
  return [`Pinning ${s.name}`, html`<${Badge} value=${s.reachable === false ? 'unreachable' : counts} tone=${tone} />${s.lastError !== null ? html` <span class="muted">${s.lastError}</span>` : ''}`]
}

export function OverviewPage () {
  const { data, error, loading } = useApi('/v1/status', { every: 2000 })
  if (loading && data === undefined) return html`<${Loading} />`
  if (data === undefined) return html`<${ErrorNote} error=${error} what="Status unavailable" />`
  const storage = data.storage ?? {}
  return html`
    <${ErrorNote} error=${error} what="Last refresh failed" />
    <p class="muted live" aria-live="off">Updates by itself every two seconds.</p>
    <div class="grid">
      <${Section} id="ov-files" title="Files" actions=${html`<a href=${link('data')}>Browse data</a>`}><${Files} files=${data.files ?? {}} /><//>
      <${Section} id="ov-ingest" title="Ingest"><${Ingest} ingest=${data.ingest} /><//>
      <${Section} id="ov-storage" title="Storage">
        <${Facts} rows=${[
          ['Backend', storage.backend],
          ['Health', html`<${Badge} value=${storage.ok ? 'ok' : 'failing'} tone=${storage.ok ? 'ok' : 'bad'} />`],
          storage.presence?.state === 'damaged' ? ['Lost', html`<${Badge} value=${`damaged (${storage.presence.missing} missing)`} tone="bad" /> ${storage.presence.repair}`] : null,
          ['Detail', storage.detail ?? '–'],
          storage.version !== undefined ? ['Kubo version', storage.version] : null,
          storage.bytes !== undefined ? ['Size', storage.bytes === null ? 'measuring…' : fmtBytes(storage.bytes)] : null,
          ...(data.pinning?.services ?? []).map(pinningRow)
        ]} />
      <//>
      <${Section} id="ov-chain" title="Chain"><${Chain} chain=${data.chain} /><//>
      <${Section} id="ov-devices" title="Devices" actions=${html`<a href=${link('devices')}>Manage</a>`}><${Devices} sync=${data.sync} /><//>
      <${Section} id="ov-upstream" title="Upstream"><${Upstream} upstream=${data.upstream} /><//>
    </div>
    <${Section} id="ov-problems" title="Files that need attention"><${Problems} rejected=${data.rejected ?? []} waiting=${data.waiting ?? []} /><//>`
}
