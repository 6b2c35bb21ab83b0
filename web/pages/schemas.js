// Schemas: `GET /v1/schemas` (installed, with where each came from) and `POST /v1/schemas` with a
// definition file, the call behind `hearth schema add`.
import { useState } from 'preact/hooks'
import { api, html, useApi, useAction, Section, Table, Badge, ErrorNote, Loading, fmtTime, shortId } from '../lib.js'

const SOURCE_TONE = { chain: 'ok', shipped: 'muted', added: 'warn' }

function AddSchema ({ onAdded }) {
  const [file, setFile] = useState(null)
  const add = useAction(async (f) => {
    let definition
    try { definition = JSON.parse(await f.text()) } catch (err) {
      throw Object.assign(new Error(`${f.name} is not JSON: ${err.message}`), { errorCode: 'INVALID_JSON' })
    }
    return await api('/v1/schemas', { method: 'POST', body: definition })
  })
  const submit = async (e) => {
    e.preventDefault()
    if (file === null) return
    if (await add.run(file) !== undefined) onAdded()
  }
  const r = add.result
  return html`<form class="row" onSubmit=${submit}>
    <label class="grow">Schema definition (JSON: name, version, scope, dialect, schema)
      <input type="file" accept=".json,application/json" required onChange=${(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
    </label>
    <button type="submit" class="primary" disabled=${add.busy || file === null}>Add schema</button>
    <${ErrorNote} error=${add.error} what="Not added" />
    ${r ? html`<p class="note ok" role="status">${r.added ? 'Added' : 'Already known:'} ${r.schema.name} for <strong>${r.schema.scope}</strong> (${shortId(r.schema.id, 14)})${r.latest ? ', now the scope\'s latest' : ''}. ${r.schema.id.startsWith('local:') ? 'It is registered on chain when one is configured.' : ''}</p>` : null}
  </form>`
}

export function SchemasPage () {
  const { data, error, loading, reload } = useApi('/v1/schemas')
  const schemas = data?.schemas ?? []
  return html`
    <${Section} id="add-schema" title="Add a schema"><${AddSchema} onAdded=${reload} /><//>
    <${Section} id="installed" title="Installed schemas">
      <${ErrorNote} error=${error} />
      ${loading && data === undefined ? html`<${Loading} />` : html`<${Table} caption="Installed schemas" rows=${schemas} rowKey=${(s) => s.id} columns=${[
        { label: 'Scope', cell: (s) => html`<strong>${s.scope}</strong>${s.latest ? html` <${Badge} value="latest" tone="ok" />` : null}` },
        { label: 'Name', cell: (s) => html`${s.name} <span class="muted">${s.version}</span>${s.description ? html`<details><summary>About</summary><p>${s.description}</p></details>` : null}` },
        { label: 'Source', cell: (s) => html`<${Badge} value=${s.source ?? 'unknown'} tone=${SOURCE_TONE[s.source] ?? 'muted'} />` },
        { label: 'Id', cell: (s) => html`<code class="id">${s.id}</code>` },
        { label: 'Added', cell: (s) => fmtTime(s.addedAt), cls: 'nowrap' }
      ]} />`}
      ${data?.sources?.length ? html`<p class="muted">Lookup sources: ${data.sources.map((x) => typeof x === 'string' ? x : x.name ?? JSON.stringify(x)).join(', ')}</p>` : null}
    <//>`
}
