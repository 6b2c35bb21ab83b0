// Assistants: AI assistants (MCP clients) connected to this Hearth. Their requests — a new
// connection, or more scopes — with what each scope means (the connectors' consent labels), to
// approve with the scopes the owner ticks or deny (`POST /v1/assistants/requests/{id}/approve|deny`);
// the connections with their grants, narrow and revoke (`POST /v1/assistants/{id}/narrow|revoke`),
// and one connection's activity from the access log (`GET /v1/assistants/{id}`): the calls behind
// `hearth requests` and `hearth assistants`.
import { useState } from 'preact/hooks'
import { api, html, useApi, useAction, Section, Facts, Table, Badge, ErrorNote, Loading, Confirm, fmtTime, fmtBytes } from '../lib.js'

const KIND = { stdio: 'on this computer (hearth mcp)', http: 'remote (OAuth)' }

/** Checkboxes of scope patterns with their labels; `choices`: [{pattern, label, description}]. */
function ScopeChoice ({ choices, chosen, onChange, legend }) {
  const toggle = (pattern) => onChange(chosen.includes(pattern) ? chosen.filter((p) => p !== pattern) : [...chosen, pattern])
  return html`<fieldset class="scopes"><legend>${legend}</legend>
    ${choices.map((c) => html`<label class="check" key=${c.pattern}>
      <input type="checkbox" checked=${chosen.includes(c.pattern)} onChange=${() => toggle(c.pattern)} />
      <span><strong>${c.label}</strong> <code>${c.pattern}</code>${c.description ? html`<br /><span class="muted">${c.description}</span>` : null}</span>
    </label>`)}
  </fieldset>`
}

function Request ({ request, connectors, onDecided }) {
  // what it asked for, ticked; when it named nothing, every installed connector's scope to choose from
  const asked = request.consent ?? []
  const choices = asked.length > 0 ? asked : connectors.flatMap((c) => c.scopes.map((s) => ({ pattern: s.scope, label: s.label, description: s.description })))
  const [chosen, setChosen] = useState(asked.map((c) => c.pattern))
  const decide = useAction(async (what) => await api(`/v1/assistants/requests/${encodeURIComponent(request.id)}/${what}`, { method: 'POST', body: what === 'approve' ? { scopes: chosen } : {} }))
  const go = async (what) => { if (await decide.run(what) !== undefined) onDecided() }
  const name = request.connection?.name ?? 'An assistant'
  return html`<article class="request" aria-labelledby=${`areq-${request.id}`}>
    <h3 id=${`areq-${request.id}`}>${name} ${request.kind === 'connect' ? 'asks to connect' : 'asks for more scopes'}</h3>
    <${Facts} rows=${[
      ['Assistant', name],
      ['Connects', KIND[request.connection?.kind] ?? '–'],
      ['Already granted', request.connection?.scopes.length ? request.connection.scopes.join(', ') : 'nothing'],
      request.purpose ? ['Purpose (its own words)', html`<q>${request.purpose}</q>`] : null,
      ['Asked', fmtTime(request.createdAt)]
    ]} />
    <${ScopeChoice} choices=${choices} chosen=${chosen} onChange=${setChosen}
      legend=${asked.length > 0 ? 'It would be able to read (untick to give less):' : 'It named no scopes. Choose what it may read:'} />
    <div class="actions">
      <button type="button" class="primary" disabled=${decide.busy || chosen.length === 0} onClick=${() => go('approve')}>Approve</button>
      <button type="button" class="danger" disabled=${decide.busy} onClick=${() => go('deny')}>Deny</button>
    </div>
    <${ErrorNote} error=${decide.error} what="Not done" />
  </article>`
}

function Requests ({ onChange }) {
  const { data, error, loading, reload } = useApi('/v1/assistants/requests?status=pending', { every: 3000 })
  const connectors = useApi('/v1/connectors')
  if (loading && data === undefined) return html`<${Loading} />`
  const requests = data?.requests ?? []
  return html`<${ErrorNote} error=${error} />
    ${requests.length === 0
      ? html`<p class="muted">No assistant is waiting for you.</p>`
      : requests.map((r) => html`<${Request} key=${r.id} request=${r} connectors=${connectors.data?.connectors ?? []} onDecided=${() => { reload(); onChange() }} />`)}`
}

function Connections ({ version, selected, onSelect }) {
  const { data, error, loading, reload } = useApi(`/v1/assistants?v=${version}`, { every: 5000 })
  const [acting, setActing] = useState(null) // {what: 'revoke'|'narrow', connection}
  const [keep, setKeep] = useState([])
  const act = useAction(async ({ what, connection }) => await api(`/v1/assistants/${encodeURIComponent(connection.id)}/${what}`, { method: 'POST', body: what === 'narrow' ? { scopes: keep } : {} }))
  const confirm = async () => { if (await act.run(acting) !== undefined) { setActing(null); reload() } }
  const open = (what, connection) => { setKeep(connection.scopes); setActing({ what, connection }) }
  if (loading && data === undefined) return html`<${Loading} />`
  const c = acting?.connection
  return html`<${ErrorNote} error=${error} />
    <${Table} caption="Connections" rows=${data?.connections ?? []} rowKey=${(x) => x.id} empty="No assistant has connected yet." columns=${[
      { label: 'Assistant', cell: (x) => html`<strong>${x.name}</strong><br /><code class="muted">${x.id}</code>` },
      { label: 'Connects', cell: (x) => KIND[x.kind] },
      { label: 'State', cell: (x) => html`<${Badge} value=${x.status} />` },
      { label: 'May read', cell: (x) => x.consent.length === 0 ? '–' : html`<ul class="plain">${x.consent.map((i) => html`<li title=${i.description}>${i.label} <code>${i.pattern}</code></li>`)}</ul>` },
      { label: 'Last used', cell: (x) => x.lastUsedAt ? fmtTime(x.lastUsedAt) : 'never' },
      {
        label: 'Actions',
        cell: (x) => html`<div class="actions">
          <button type="button" class="small" aria-pressed=${selected === x.id} onClick=${() => onSelect(selected === x.id ? null : x.id)} aria-label=${`Activity of ${x.name}`}>Activity</button>
          ${x.status === 'active' ? html`
            <button type="button" class="small" onClick=${() => open('narrow', x)} aria-label=${`Narrow ${x.name}`}>Narrow</button>
            <button type="button" class="danger small" onClick=${() => open('revoke', x)} aria-label=${`Revoke ${x.name}`}>Revoke</button>` : null}
        </div>`
      }
    ]} />
    <${ErrorNote} error=${act.error} what="Not done" />
    <${Confirm} open=${acting !== null} title=${acting?.what === 'narrow' ? 'Keep only these scopes?' : 'Revoke this assistant?'}
      confirmLabel=${acting?.what === 'narrow' ? 'Narrow' : 'Revoke'} danger=${acting?.what === 'revoke'} busy=${act.busy} onCancel=${() => setActing(null)} onConfirm=${confirm}>
      ${acting?.what === 'narrow'
        ? html`<${ScopeChoice} choices=${c.consent} chosen=${keep} onChange=${setKeep} legend=${`${c.name} may go on reading:`} />`
        : html`<p>${c?.name} can no longer read anything from this Hearth, from its very next call. To use it again, it asks you anew.</p>`}
    <//>`
}

function Activity ({ id }) {
  const { data, error, loading } = useApi(`/v1/assistants/${encodeURIComponent(id)}?limit=50`, { every: 5000 })
  if (loading && data === undefined) return html`<${Loading} />`
  return html`<${ErrorNote} error=${error} />
    ${data ? html`<p>The latest tool calls of <strong>${data.name}</strong>, newest first (all of them: <code>hearth access-log --connection ${data.id}</code>).</p>` : null}
    <${Table} caption="Activity" rows=${data?.activity ?? []} rowKey=${(e) => e.logId} empty="No tool call yet." columns=${[
      { label: 'When', cell: (e) => fmtTime(e.at) },
      { label: 'Tool call', cell: (e) => e.action },
      { label: 'Scope', cell: (e) => e.scope ?? '–' },
      { label: 'Answer', cell: (e) => html`<${Badge} value=${String(e.status)} tone=${e.status < 300 ? 'ok' : 'bad'} />${e.errorCode ? html` <code>${e.errorCode}</code>` : null}` },
      { label: 'Bytes', cell: (e) => fmtBytes(e.bytes), cls: 'num' }
    ]} />`
}

export function AssistantsPage () {
  const [version, setVersion] = useState(0)
  const [selected, setSelected] = useState(null)
  return html`
    <p class="muted">AI assistants (Claude Desktop, Cursor, VS Code, any MCP client) read only the scopes you approve here. Connect one with <code>hearth mcp</code>: the README's "Assistants (MCP)" has the exact settings.</p>
    <${Section} id="assistant-requests" title="Waiting for you"><${Requests} onChange=${() => setVersion(version + 1)} /><//>
    <${Section} id="connections" title="Connections"><${Connections} version=${version} selected=${selected} onSelect=${setSelected} /><//>
    ${selected !== null ? html`<${Section} id="activity" title="Activity"><${Activity} id=${selected} /><//>` : null}`
}
