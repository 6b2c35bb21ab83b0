// Builders: pending access requests with what each scope means (the connectors' consent labels),
// approve or deny (`POST /v1/access-requests/{id}/approve|deny`), grants with revoke
// (`POST /v1/grants/{id}/revoke`), and the access log, filterable (`GET /v1/access-logs`):
// the calls behind `hearth requests`, `hearth grants` and `hearth access-log`.
import { useState } from 'preact/hooks'
import { api, html, useApi, useAction, Section, Facts, Table, Badge, ErrorNote, Loading, Confirm, fmtTime, fmtBytes, shortId } from '../lib.js'

function expiry (unixSeconds) {
  return unixSeconds === 0 || unixSeconds === undefined ? 'never' : fmtTime(unixSeconds * 1000)
}

function Request ({ request, onDecided }) {
  const decide = useAction(async (what) => await api(`/v1/access-requests/${encodeURIComponent(request.id)}/${what}`, { method: 'POST' }))
  const go = async (what) => { if (await decide.run(what) !== undefined) onDecided() }
  const b = request.builderInfo
  return html`<article class="request" aria-labelledby=${`req-${request.id}`}>
    <h3 id=${`req-${request.id}`}>${request.appUrl ?? b?.appUrl ?? 'A builder'} asks for ${request.scopes.length} scope${request.scopes.length === 1 ? '' : 's'}</h3>
    <${Facts} rows=${[
      ['Builder', html`<code class="wrap">${request.builder}</code>`],
      ['App', request.appUrl ?? b?.appUrl ?? '–'],
      ['Purpose', request.purpose ?? '–'],
      ['Until', expiry(request.expiresAt)],
      ['Asked', fmtTime(request.createdAt)],
      ['Registered builder', b ? `yes, since ${fmtTime(b.registeredAt)}` : 'not in the local registry']
    ]} />
    <p>It would be able to read:</p>
    <ul class="scopes">${(request.consent ?? request.scopes.map((pattern) => ({ pattern, label: pattern, description: '' }))).map((c) => html`<li>
      <strong>${c.label}</strong> <code>${c.pattern}</code>${c.description ? html`<br /><span class="muted">${c.description}</span>` : null}
    </li>`)}</ul>
    <div class="actions">
      <button type="button" class="primary" disabled=${decide.busy} onClick=${() => go('approve')}>Approve</button>
      <button type="button" class="danger" disabled=${decide.busy} onClick=${() => go('deny')}>Deny</button>
    </div>
    <${ErrorNote} error=${decide.error} what="Not done" />
  </article>`
}

function Requests ({ onChange }) {
  const { data, error, loading, reload } = useApi('/v1/access-requests?status=pending', { every: 3000 })
  const status = useApi('/v1/status')
  const listenerOff = status.data !== undefined && status.data.builders?.listener == null
  if (loading && data === undefined) return html`<${Loading} />`
  const requests = data?.requests ?? []
  return html`<${ErrorNote} error=${error} />
    ${requests.length === 0 ? html`<p class="muted">No access request is waiting for you.</p>${listenerOff ? html`<p class="note small">The builder listener is off, so no builder can reach this daemon to ask. Set <code>builders.listen</code> (for example <code>127.0.0.1:8471</code>) under <a href="#/settings">Settings → builders</a> and restart the daemon.</p>` : null}` : requests.map((r) => html`<${Request} key=${r.id} request=${r} onDecided=${() => { reload(); onChange() }} />`)}`
}

function Grants ({ version }) {
  const { data, error, loading, reload } = useApi(`/v1/grants?limit=100&v=${version}`, { every: 5000 })
  const [revoking, setRevoking] = useState(null)
  const revoke = useAction(async (id) => await api(`/v1/grants/${encodeURIComponent(id)}/revoke`, { method: 'POST' }))
  const confirm = async () => { if (await revoke.run(revoking.grantId) !== undefined) { setRevoking(null); reload() } }
  if (loading && data === undefined) return html`<${Loading} />`
  return html`<${ErrorNote} error=${error} />
    <${Table} caption="Grants" rows=${data?.grants ?? []} rowKey=${(g) => g.grantId} empty="No grants yet." columns=${[
      { label: 'Builder', cell: (g) => html`<code title=${g.builder}>${shortId(g.builder, 8)}</code>` },
      { label: 'Scopes', cell: (g) => g.scopes.join(', ') },
      { label: 'State', cell: (g) => html`<${Badge} value=${g.state ?? (g.revokedAt ? 'revoked' : 'active')} />` },
      { label: 'Until', cell: (g) => expiry(g.expiresAt) },
      { label: 'Reads', cell: (g) => g.reads ?? '–', cls: 'num' },
      { label: 'Chain', cell: (g) => g.chain },
      { label: 'Actions', cell: (g) => g.revokedAt === null && g.state !== 'expired' ? html`<button type="button" class="danger small" onClick=${() => setRevoking(g)} aria-label=${`Revoke grant ${g.grantId}`}>Revoke</button>` : '–' }
    ]} />
    <${ErrorNote} error=${revoke.error} what="Not revoked" />
    <${Confirm} open=${revoking !== null} title="Revoke this grant?" confirmLabel="Revoke" danger busy=${revoke.busy} onCancel=${() => setRevoking(null)} onConfirm=${confirm}>
      <p>The builder <code class="wrap">${revoking?.builder}</code> can no longer read ${revoking?.scopes.join(', ')} from this daemon, from now on. ${revoking?.chain === 'on-chain' || revoking?.chain === 'queued' ? 'The revocation is also sent to the chain.' : ''}</p>
    <//>`
}

function AccessLog () {
  const [filter, setFilter] = useState({ builder: '', scope: '', since: '' })
  const [applied, setApplied] = useState(filter)
  const q = new URLSearchParams({ order: 'desc', limit: '50' })
  if (applied.builder) q.set('builder', applied.builder)
  if (applied.scope) q.set('scope', applied.scope)
  if (applied.since) q.set('since', new Date(applied.since).toISOString())
  const { data, error, loading } = useApi(`/v1/access-logs?${q}`, { every: 5000 })
  const field = (name, label, type = 'text', placeholder = '') => html`<label>${label}
    <input type=${type} name=${name} value=${filter[name]} placeholder=${placeholder} onInput=${(e) => setFilter({ ...filter, [name]: e.currentTarget.value.trim() })} /></label>`
  return html`
    <form class="row" onSubmit=${(e) => { e.preventDefault(); setApplied(filter) }} aria-label="Filter the access log">
      ${field('builder', 'Builder address', 'text', '0x…')}
      ${field('scope', 'Scope', 'text', 'spotify.savedTracks')}
      ${field('since', 'Since', 'datetime-local')}
      <button type="submit">Filter</button>
    </form>
    <${ErrorNote} error=${error} />
    ${loading && data === undefined ? html`<${Loading} />` : html`<${Table} caption="Access log" rows=${data?.entries ?? []} rowKey=${(e) => e.logId} empty="Nothing logged (for this filter)." columns=${[
      { label: 'When', cell: (e) => fmtTime(e.at) },
      { label: 'Builder', cell: (e) => e.builder ? html`<code title=${e.builder}>${shortId(e.builder, 8)}</code>` : '–' },
      { label: 'Action', cell: (e) => e.action },
      { label: 'Scope', cell: (e) => e.scope ?? '–' },
      { label: 'Answer', cell: (e) => html`<${Badge} value=${String(e.status)} tone=${e.status < 300 ? 'ok' : 'bad'} />${e.errorCode ? html` <code>${e.errorCode}</code>` : null}` },
      { label: 'Bytes', cell: (e) => fmtBytes(e.bytes), cls: 'num' },
      { label: 'From', cell: (e) => e.ip ?? '–' }
    ]} />`}`
}

export function BuildersPage () {
  const [version, setVersion] = useState(0)
  return html`
    <${Section} id="requests" title="Access requests"><${Requests} onChange=${() => setVersion(version + 1)} /><//>
    <${Section} id="grants" title="Grants"><${Grants} version=${version} /><//>
    <${Section} id="access-log" title="Access log"><${AccessLog} /><//>`
}
