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

function Setting ({ path, schema, value, source, onSaved }) {
  const id = `set-${path.replace(/\./g, '-')}`
  const [text, setText] = useState(toText(schema, value))
  const [checked, setChecked] = useState(value === true)
  const [state, setState] = useState({ busy: false, error: null, saved: null })
  const t = types(schema)
  const isBool = t.includes('boolean')
  const overridden = source.startsWith('env') || source.startsWith('flag')
  const send = async (body) => {
    setState({ busy: true, error: null, saved: null })
    try {
      const r = await api('/v1/config', { method: 'PATCH', body })
      setState({ busy: false, error: null, saved: r })
      onSaved()
    } catch (error) { setState({ busy: false, error, saved: null }) }
  }
  const save = (e) => { e.preventDefault(); void send({ set: { [path]: isBool ? checked : parseInput(schema, text) } }) }
  let input
  if (isBool) input = html`<input id=${id} type="checkbox" checked=${checked} onChange=${(e) => setChecked(e.currentTarget.checked)} />`
  else if (schema.enum !== undefined) {
    input = html`<select id=${id} value=${text} onChange=${(e) => setText(e.currentTarget.value)}>${schema.enum.map((v) => html`<option value=${v === null ? '' : String(v)}>${v === null ? '(none)' : String(v)}</option>`)}</select>`
  } else if (t.includes('array') || t.includes('object')) {
    input = html`<textarea id=${id} rows="3" spellcheck="false" onInput=${(e) => setText(e.currentTarget.value)}>${text}</textarea>`
  } else if (t.includes('integer') || t.includes('number')) {
    input = html`<input id=${id} type="number" inputmode="numeric" min=${schema.minimum} max=${schema.maximum} value=${text} onInput=${(e) => setText(e.currentTarget.value)} />`
  } else {
    input = html`<input id=${id} type="text" spellcheck="false" value=${text} placeholder=${t.includes('null') ? '(none)' : ''} onInput=${(e) => setText(e.currentTarget.value)} />`
  }
  const saved = state.saved
  return html`<form class="setting" onSubmit=${save} aria-labelledby=${`${id}-label`}>
    <div class="setting-head">
      <label for=${id} id=${`${id}-label`}><code>${path}</code></label>
      <${Badge} value=${source} tone=${sourceTone(source)} />
      ${schema['x-live'] ? html`<span class="muted small">applies at once</span>` : html`<span class="muted small">needs a restart</span>`}
    </div>
    <p class="muted small">${schema.description ?? ''}${schema['x-env'] ? html` · variable <code>${schema['x-env']}</code>` : null}</p>
    <div class="row">${input}
      <button type="submit" disabled=${state.busy}>Save</button>
      ${source === 'file' ? html`<button type="button" class="quiet" disabled=${state.busy} onClick=${() => send({ unset: [path] })}>Reset to default</button>` : null}
    </div>
    ${overridden ? html`<p class="note small">Set by ${source}: a saved value goes to config.json but the environment still wins while it is set.</p>` : null}
    <${ErrorNote} error=${state.error} what="Not saved" />
    ${saved ? html`<p class="note ok small" role="status">Saved to config.json. ${saved.applied.includes(path) ? 'Applied now.' : saved.restartRequired.includes(path) ? 'Takes effect when the daemon restarts.' : ''}${saved.overridden[path] ? ` Still overridden by ${saved.overridden[path]}.` : ''}</p>` : null}
  </form>`
}

export function SettingsPage () {
  const { data, error, loading, reload } = useApi('/v1/config')
  if (loading && data === undefined) return html`<${Loading} />`
  if (data === undefined) return html`<${ErrorNote} error=${error} />`
  const keys = leaves(data.schema)
  const groups = new Map()
  for (const k of keys) {
    const g = k.path.includes('.') ? k.path.split('.')[0] : 'general'
    if (!groups.has(g)) groups.set(g, [])
    groups.get(g).push(k)
  }
  return html`
    <p>The configuration this daemon runs with, and where each value comes from: <${Badge} value="default" tone="muted" />, <${Badge} value="file" tone="ok" /> (<code class="wrap">${data.configFile}</code>) or an environment variable. Every change is checked against the configuration schema before it is written.</p>
    <${ErrorNote} error=${error} />
    ${[...groups].map(([group, ks]) => html`<${Section} id=${`cfg-${group}`} title=${group}>
      ${ks.map((k) => html`<${Setting} key=${k.path} path=${k.path} schema=${k.schema} value=${getPath(data.config, k.path)} source=${data.sources[k.path] ?? 'default'} onSaved=${reload} />`)}
    <//>`)}`
}
