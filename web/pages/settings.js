// Settings: the running configuration with each value's source (`GET /v1/config`, which also
// carries the configuration's JSON Schema), edited one key at a time with `PATCH /v1/config`
// (validated against that schema and written to config.json, like `hearth config set`).
import { useState } from 'preact/hooks'
import { api, html, useApi, Section, ErrorNote, Loading, Badge } from '../lib.js'

function leaves (node, prefix = '') {
  if (node.properties === undefined) return [{ path: prefix, schema: node }]
  return Object.entries(node.properties).flatMap(([k, child]) => leaves(child, prefix === '' ? k : `${prefix}.${k}`))
}

function getPath (obj, path) {
  return path.split('.').reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), obj)
}

const types = (schema) => Array.isArray(schema.type) ? schema.type : [schema.type]

/** The value the form holds → the JSON value to send (null for an empty nullable field). */
function parseInput (schema, text) {
  const t = types(schema)
  if (t.includes('null') && text.trim() === '') return null
  if (t.includes('integer') || t.includes('number')) {
    const n = Number(text)
    return text.trim() === '' || Number.isNaN(n) ? text : n
  }
  if (t.includes('array')) return text.split('\n').map((s) => s.trim()).filter((s) => s !== '')
  if (t.includes('object')) { try { return JSON.parse(text) } catch { return text } }
  return text
}

function toText (schema, value) {
  if (value === null || value === undefined) return ''
  if (Array.isArray(value)) return value.join('\n')
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

function sourceTone (source) {
  return source === 'default' ? 'muted' : source === 'file' ? 'ok' : 'warn'
}

/** One key's field (no button of its own: its section has one Save). */
function Setting ({ path, schema, text, source, onChange, onReset, busy, hidden }) {
  const id = `set-${path.replace(/\./g, '-')}`
  const t = types(schema)
  const overridden = source.startsWith('env') || source.startsWith('flag')
  let input
  if (t.includes('boolean')) input = html`<input id=${id} type="checkbox" checked=${text === 'true'} onChange=${(e) => onChange(String(e.currentTarget.checked))} />`
  else if (schema.enum !== undefined) {
    input = html`<select id=${id} value=${text} onChange=${(e) => onChange(e.currentTarget.value)}>${schema.enum.map((v) => html`<option value=${v === null ? '' : String(v)}>${v === null ? '(none)' : String(v)}</option>`)}</select>`
  } else if (t.includes('array') || t.includes('object')) {
    input = html`<textarea id=${id} rows="3" spellcheck="false" value=${text} onInput=${(e) => onChange(e.currentTarget.value)}></textarea>`
  } else if (t.includes('integer') || t.includes('number')) {
    input = html`<input id=${id} type="number" inputmode="numeric" min=${schema.minimum} max=${schema.maximum} value=${text} onInput=${(e) => onChange(e.currentTarget.value)} />`
  } else {
    input = html`<input id=${id} type="text" spellcheck="false" value=${text} placeholder=${t.includes('null') ? '(none)' : ''} onInput=${(e) => onChange(e.currentTarget.value)} />`
  }
  return html`<div class="setting" data-key=${path} hidden=${hidden}>
    <div class="setting-head">
      <label for=${id}><code>${path}</code></label>
      <${Badge} value=${source} tone=${sourceTone(source)} />
      <span class="muted small">${schema['x-live'] ? 'applies at once' : 'needs a restart'}</span>
      ${source === 'file' ? html`<button type="button" class="quiet small" disabled=${busy} onClick=${onReset}>Reset to default</button>` : null}
    </div>
    <p class="muted small">${schema.description ?? ''}${schema['x-env'] ? html` · variable <code>${schema['x-env']}</code>` : null}</p>
    <div class="row">${input}</div>
    ${overridden ? html`<p class="note small">Set by ${source}: a saved value goes to config.json but the environment still wins while it is set.</p>` : null}
  </div>`
}

/** What a save said, in words: what applies now, what waits for a restart, what stays overridden. */
function savedNote (saved) {
  const parts = []
  if (saved.applied.length > 0) parts.push(`applied now: ${saved.applied.join(', ')}`)
  if (saved.restartRequired.length > 0) parts.push(`takes effect when the daemon restarts: ${saved.restartRequired.join(', ')}`)
  const over = Object.entries(saved.overridden)
  if (over.length > 0) parts.push(`still overridden: ${over.map(([k, v]) => `${k} by ${v}`).join(', ')}`)
  const said = parts.join('; ')
  return `Saved to config.json. ${said.charAt(0).toUpperCase()}${said.slice(1)}.`
}

/** A section of keys (one top-level group): collapsible, with one Save for the keys changed in it. */
function Group ({ group, keys, shown, filtering, data, onSaved }) {
  const open = filtering && shown.length > 0
  // only what the owner typed; every other field shows the running value
  const [edits, setEdits] = useState({})
  // opened by the owner (stays open when a filter that opened every match is cleared)
  const [userOpen, setUserOpen] = useState(false)
  const [state, setState] = useState({ busy: false, error: null, saved: null })
  const current = (k) => toText(k.schema, getPath(data.config, k.path))
  const textOf = (k) => edits[k.path] ?? current(k)
  const changed = keys.filter((k) => edits[k.path] !== undefined && edits[k.path] !== current(k))
  const live = keys.filter((k) => k.schema['x-live']).length
  const send = async (body) => {
    setState({ busy: true, error: null, saved: null })
    try {
      const saved = await api('/v1/config', { method: 'PATCH', body })
      setState({ busy: false, error: null, saved })
      setEdits({})
      onSaved()
    } catch (error) { setState({ busy: false, error, saved: null }) }
  }
  const save = (e) => {
    e.preventDefault()
    const set = Object.fromEntries(changed.map((k) => [k.path, types(k.schema).includes('boolean') ? textOf(k) === 'true' : parseInput(k.schema, textOf(k))]))
    void send({ set })
  }
  const fromFile = keys.filter((k) => (data.sources[k.path] ?? 'default') === 'file').length
  return html`<details class="card settings-group" id=${`cfg-${group}`} hidden=${shown.length === 0} open=${open || userOpen} onToggle=${(e) => { if (!open) setUserOpen(e.currentTarget.open) }}>
    <summary><h2>${group}</h2> <span class="muted small">${keys.length} setting${keys.length === 1 ? '' : 's'}${fromFile > 0 ? `, ${fromFile} set in config.json` : ''} · ${live === keys.length ? 'all apply at once' : live === 0 ? 'all need a restart' : `${live} apply at once, ${keys.length - live} need a restart`}</span></summary>
    <form onSubmit=${save} aria-label=${`${group} settings`}>
      ${keys.map((k) => html`<${Setting} key=${k.path} hidden=${!shown.includes(k)} path=${k.path} schema=${k.schema} text=${textOf(k)} source=${data.sources[k.path] ?? 'default'} busy=${state.busy}
        onChange=${(v) => setEdits({ ...edits, [k.path]: v })} onReset=${() => send({ unset: [k.path] })} />`)}
      <div class="actions save-bar">
        <button type="submit" disabled=${state.busy || changed.length === 0}>Save ${group}${changed.length > 0 ? ` (${changed.length} change${changed.length === 1 ? '' : 's'})` : ''}</button>
        ${changed.length > 0 ? html`<button type="button" class="quiet" disabled=${state.busy} onClick=${() => setEdits({})}>Undo changes</button>` : null}
        <span class="muted small">${changed.filter((k) => !k.schema['x-live']).length > 0 ? 'Some of these changes need a restart.' : ''}</span>
      </div>
      <${ErrorNote} error=${state.error} what="Not saved" />
      ${state.saved ? html`<p class="note ok small" role="status">${savedNote(state.saved)}</p>` : null}
    </form>
  </details>`
}

export function SettingsPage () {
  const { data, error, loading, reload } = useApi('/v1/config')
  const [filter, setFilter] = useState('')
  if (loading && data === undefined) return html`<${Loading} />`
  if (data === undefined) return html`<${ErrorNote} error=${error} />`
  const words = filter.trim().toLowerCase()
  const matches = (k) => words === '' || k.path.toLowerCase().includes(words) || (k.schema.description ?? '').toLowerCase().includes(words)
  const groups = new Map()
  for (const k of leaves(data.schema)) {
    const g = k.path.includes('.') ? k.path.split('.')[0] : 'general'
    if (!groups.has(g)) groups.set(g, [])
    groups.get(g).push(k)
  }
  return html`
    <p>The configuration this daemon runs with, and where each value comes from: <${Badge} value="default" tone="muted" />, <${Badge} value="file" tone="ok" /> (<code class="wrap">${data.configFile}</code>) or an environment variable. Every change is checked against the configuration schema before it is written; each section says what applies at once and what needs a restart.</p>
    <label class="inline settings-filter">Find a setting <input type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} placeholder="e.g. port, sync, upstream" /></label>
    <${ErrorNote} error=${error} />
    ${[...groups.values()].every((ks) => !ks.some(matches)) ? html`<p class="muted">No setting matches “${filter}”.</p>` : null}
    ${[...groups].map(([group, ks]) => html`<${Group} key=${group} group=${group} keys=${ks} shown=${ks.filter(matches)} filtering=${words !== ''} data=${data} onSaved=${reload} />`)}`
}
