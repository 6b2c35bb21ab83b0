// Data: scopes (`GET /v1/data`) → a scope's versions (`GET /v1/data/{scope}/versions`, paged) →
// one version decrypted (`GET /v1/data/{scope}?at=` or `?fileId=`), readable, raw and as a download.
// Deleting a scope is `DELETE /v1/data/{scope}`, the same call as `hearth rm`.
import { useState } from 'preact/hooks'
import { api, html, useApi, useAction, Section, Facts, Table, Badge, ErrorNote, Loading, Pager, Confirm, fmtBytes, fmtTime, shortId, link, download } from '../lib.js'
import { Conversation } from './conversation.js'

const PAGE = 20

function Scopes () {
  const [offset, setOffset] = useState(0)
  const [filter, setFilter] = useState('')
  const { data, error, loading } = useApi(`/v1/data?limit=${PAGE + 1}&offset=${offset}&scopePrefix=${encodeURIComponent(filter)}`, { every: 5000 })
  const rows = (data?.scopes ?? []).slice(0, PAGE)
  const more = (data?.scopes ?? []).length > PAGE
  return html`<${Section} id="scopes" title="Scopes">
    <label class="inline">Scopes starting with <input type="search" value=${filter} onInput=${(e) => { setFilter(e.currentTarget.value.trim()); setOffset(0) }} placeholder="e.g. spotify." /></label>
    <${ErrorNote} error=${error} />
    ${loading && data === undefined ? html`<${Loading} />` : html`<${Table} caption="Scopes" rows=${rows} rowKey=${(s) => s.scope} empty="No data yet: drop files into data/<scope>/ or import an export." columns=${[
      { label: 'Scope', cell: (s) => html`<a href=${link('data', s.scope)}>${s.scope}</a>` },
      { label: 'Versions', cell: (s) => s.count, cls: 'num' },
      { label: 'Latest', cell: (s) => fmtTime(s.latestCollectedAt) }
    ]} />`}
    ${offset > 0 || more ? html`<nav class="pager" aria-label="Scope pages">
      <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>← Previous</button>
      <button type="button" disabled=${!more} onClick=${() => setOffset(offset + PAGE)}>Next →</button>
    </nav>` : null}
  <//>`
}

function DeleteScope ({ scope, total }) {
  const [open, setOpen] = useState(false)
  const del = useAction(async () => await api(`/v1/data/${encodeURIComponent(scope)}`, { method: 'DELETE' }))
  const confirm = async () => {
    const r = await del.run()
    if (r !== undefined) { setOpen(false); location.hash = link('data') }
  }
  return html`
    <button type="button" class="danger" onClick=${() => setOpen(true)}>Delete scope…</button>
    <${ErrorNote} error=${del.error} what="Delete failed" />
    <${Confirm} open=${open} title=${`Delete ${scope}?`} confirmLabel="Delete everywhere" danger busy=${del.busy} onCancel=${() => setOpen(false)} onConfirm=${confirm}>
      <p>This removes all ${total} version${total === 1 ? '' : 's'} of <strong>${scope}</strong> from this device: the files in its data folder, their index entries, and the stored ciphertext no other file uses.</p>
      <p><strong>Your other devices delete it too</strong> the next time they sync with this one: the deletion travels to them like any other change, and they remove their copies.</p>
      <p>Registrations already on the chain cannot be undone; they point at ciphertext that only your key opens.</p>
    <//>`
}

function Versions ({ scope }) {
  const [offset, setOffset] = useState(0)
  const { data, error, loading } = useApi(`/v1/data/${encodeURIComponent(scope)}/versions?limit=${PAGE}&offset=${offset}`)
  return html`
    <p><a href=${link('data')}>← All scopes</a></p>
    <${Section} id="versions" title=${`Versions of ${scope}`} actions=${data ? html`<${DeleteScope} scope=${scope} total=${data.total} />` : null}>
      <${ErrorNote} error=${error} />
      ${loading && data === undefined ? html`<${Loading} />` : data ? html`
        <p class="muted">${data.total} version${data.total === 1 ? '' : 's'}, newest first.</p>
        <${Table} caption=${`Versions of ${scope}`} rows=${data.versions} rowKey=${(v) => v.path} columns=${[
          { label: 'Collected', cls: 'nowrap', cell: (v) => v.collectedAt && (v.state === 'stored' || v.state === 'registered') ? html`<a href=${link('data', scope, v.fileId ? `fileId:${v.fileId}` : v.collectedAt)}>${fmtTime(v.collectedAt)}</a>` : fmtTime(v.collectedAt) },
          { label: 'State', cell: (v) => html`<${Badge} value=${v.state} />${v.reasons?.length > 0 && v.state !== 'stored' && v.state !== 'registered' ? html`<ul class="reasons small">${v.reasons.slice(0, 5).map((r) => html`<li>${r}</li>`)}</ul>` : null}` },
          { label: 'CID', cell: (v) => v.url ? html`<code title=${v.url}>${shortId(v.url.replace('ipfs://', ''), 8)}</code>` : '–' },
          { label: 'File id', cell: (v) => v.fileId ?? '–', cls: 'num' },
          { label: 'Origin', cell: (v) => v.origin ?? '–' },
          { label: 'Size', cell: (v) => fmtBytes(v.size), cls: 'num' }
        ]} />
        <${Pager} offset=${offset} limit=${PAGE} total=${data.total} onPage=${setOffset} label="Version pages" />` : null}
    <//>`
}

/** Renders any JSON value readably: objects as labelled rows, lists of objects as tables. */
function Value ({ value, depth = 0 }) {
  if (value === null || value === undefined) return html`<span class="muted">–</span>`
  if (typeof value !== 'object') {
    const s = String(value)
    return /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(s) ? html`<time datetime=${s}>${fmtTime(s)}</time>` : html`<span class="value">${s}</span>`
  }
  if (depth > 6) return html`<code>${JSON.stringify(value).slice(0, 200)}</code>`
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">(none)</span>`
    const objects = value.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))
    const shown = value.slice(0, 200)
    const more = value.length > shown.length ? html`<p class="muted">…and ${value.length - shown.length} more (see the raw JSON)</p>` : null
    if (objects) {
      const keys = [...new Set(shown.flatMap((x) => Object.keys(x)))].slice(0, 8)
      return html`<${Table} caption="list" rows=${shown} columns=${keys.map((k) => ({ label: k, cell: (r) => html`<${Value} value=${r[k]} depth=${depth + 1} />` }))} />${more}`
    }
    return html`<ul class="values">${shown.map((x) => html`<li><${Value} value=${x} depth=${depth + 1} /></li>`)}</ul>${more}`
  }
  return html`<dl class="facts nested">${Object.entries(value).map(([k, v]) => html`<div><dt>${k}</dt><dd><${Value} value=${v} depth=${depth + 1} /></dd></div>`)}</dl>`
}

function Version ({ scope, which }) {
  const query = which.startsWith('fileId:') ? `fileId=${encodeURIComponent(which.slice(7))}` : `at=${encodeURIComponent(which)}`
  const { data, error, loading } = useApi(`/v1/data/${encodeURIComponent(scope)}?${query}`)
  const [raw, setRaw] = useState(false)
  return html`
    <p><a href=${link('data', scope)}>← Versions of ${scope}</a></p>
    <${ErrorNote} error=${error} what="Cannot open this version" />
    ${loading ? html`<${Loading} what="Decrypting" />` : data ? html`
      <${Section} id="envelope" title=${`${scope} at ${fmtTime(data.collectedAt)}`} actions=${html`
        <button type="button" aria-pressed=${raw} onClick=${() => setRaw(!raw)}>${raw ? 'Readable view' : 'Raw JSON'}</button>
        <button type="button" onClick=${() => download(`${scope}-${data.collectedAt}.json`, data)}>Download</button>`}>
        <${Facts} rows=${[['Scope', data.scope], ['Collected', data.collectedAt], ['Schema', html`<code class="wrap">${data.$schema}</code>`], ['Envelope version', data.version]]} />
        <h3>Data</h3>
        ${raw ? html`<pre class="raw" tabindex="0" aria-label="Raw JSON">${JSON.stringify(data, null, 2)}</pre>`
          : data.scope === 'chatgpt.conversations' && Array.isArray(data.data?.messages) ? html`<${Conversation} data=${data.data} />`
          : html`<div class="envelope"><${Value} value=${data.data} /></div>`}
      <//>` : null}`
}

export function DataPage ({ route }) {
  const [scope, which] = route
  if (scope === undefined || scope === '') return html`<${Scopes} />`
  if (which === undefined) return html`<${Versions} scope=${scope} />`
  return html`<${Version} scope=${scope} which=${which} />`
}
