// Import: upload an export archive (`POST /v1/imports`), pick one of the connectors that fit it,
// start (`POST /v1/imports/{id}/start`) and watch `GET /v1/imports/{id}` until the result table.
// The daemon runs the connector in a child process and submits items like `hearth import` does.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, html, useApi, Section, Table, Badge, ErrorNote, fmtBytes, fmtTime, link } from '../lib.js'

/** XHR rather than fetch: it reports upload progress, which matters for a multi-gigabyte archive. */
function uploadArchive (file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    const q = new URLSearchParams({ name: file.name, modifiedAt: String(file.lastModified ?? '') })
    xhr.open('POST', `/v1/imports?${q}`)
    xhr.setRequestHeader('content-type', 'application/octet-stream')
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total) }
    xhr.onload = () => {
      let body
      try { body = JSON.parse(xhr.responseText) } catch { body = undefined }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body)
      else reject(new ApiError(xhr.status, body))
    }
    xhr.onerror = () => reject(new ApiError(0, { error: { message: 'the upload was interrupted' } }))
    xhr.send(file)
  })
}

function useJob (id) {
  const [job, setJob] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    if (id === null) { setJob(null); return }
    let stop = false
    let timer
    const tick = async () => {
      try {
        const j = await api(`/v1/imports/${encodeURIComponent(id)}`)
        if (stop) return
        setJob(j)
        setError(null)
        if (j.state === 'done' || j.state === 'failed') return
      } catch (err) { if (!stop) setError(err) }
      timer = setTimeout(tick, 400)
    }
    void tick()
    return () => { stop = true; clearTimeout(timer) }
  }, [id])
  return { job, error, setJob }
}

function Chooser ({ onUploaded }) {
  const [over, setOver] = useState(false)
  const [uploading, setUploading] = useState(null)
  const [error, setError] = useState(null)
  const input = useRef(null)
  const take = async (file) => {
    if (!file) return
    setError(null)
    setUploading({ name: file.name, size: file.size, part: 0 })
    try {
      const job = await uploadArchive(file, (part) => setUploading({ name: file.name, size: file.size, part }))
      onUploaded(job)
    } catch (err) { setError(err) } finally { setUploading(null) }
  }
  return html`<div>
    <div class=${`drop ${over ? 'over' : ''}`}
      onDragOver=${(e) => { e.preventDefault(); setOver(true) }}
      onDragLeave=${() => setOver(false)}
      onDrop=${(e) => { e.preventDefault(); setOver(false); void take(e.dataTransfer?.files?.[0]) }}>
      <p><strong>Drop an export archive here</strong> (the zip a platform lets you download, or a single JSON file)</p>
      <label class="button primary">Choose a file…
        <input ref=${input} class="sr-only" type="file" name="archive" accept=".zip,.json,application/zip,application/json" disabled=${uploading !== null} onChange=${(e) => void take(e.currentTarget.files?.[0])} />
      </label>
    </div>
    ${uploading ? html`<p role="status">Uploading ${uploading.name} (${fmtBytes(uploading.size)})… <progress max="1" value=${uploading.part} aria-label="upload"></progress></p>` : null}
    <${ErrorNote} error=${error} what="Upload failed" />
  </div>`
}

function PickConnector ({ job, onStarted }) {
  const fits = job.suggestions.filter((s) => s.matches)
  const ordered = [...fits, ...job.suggestions.filter((s) => !s.matches)]
  const [chosen, setChosen] = useState(fits[0]?.connectorId ?? ordered[0]?.connectorId ?? '')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const start = async (e) => {
    e.preventDefault()
    setBusy(true)
    try { onStarted(await api(`/v1/imports/${encodeURIComponent(job.id)}/start`, { method: 'POST', body: { connector: chosen } })) } catch (err) { setError(err) } finally { setBusy(false) }
  }
  return html`<form onSubmit=${start}>
    <p>${job.name}: ${fmtBytes(job.size)}, ${job.entries ?? '?'} files inside. ${fits.length > 0 ? `Suggested: ${fits.map((s) => s.displayName).join(', ')}.` : 'No installed connector recognised it; you can still try one.'}</p>
    <fieldset>
      <legend>Connector</legend>
      ${ordered.map((s) => html`<label class="radio"><input type="radio" name="connector" value=${s.connectorId} checked=${chosen === s.connectorId} onChange=${() => setChosen(s.connectorId)} />
        ${s.displayName} <code>${s.connectorId}</code> ${s.matches ? html`<${Badge} value="fits this export" tone="ok" />` : html`<span class="muted">(found nothing it reads)</span>`}</label>`)}
    </fieldset>
    <button type="submit" class="primary" disabled=${busy || chosen === ''}>Import with ${ordered.find((s) => s.connectorId === chosen)?.displayName ?? '…'}</button>
    <${ErrorNote} error=${error} what="Could not start" />
  </form>`
}

function Progress ({ job }) {
  const p = job.progress
  const finished = job.state === 'done' || job.state === 'failed'
  return html`<div role="status" aria-live="polite">
    <p><strong>${finished ? (job.state === 'done' ? 'Import finished' : 'Import stopped') : 'Importing…'}</strong> ${p.done} item${p.done === 1 ? '' : 's'} handled: ${p.stored} stored, ${p.duplicate} duplicate, ${p.rejected} rejected, ${p.waiting} waiting for a schema.</p>
    ${finished ? html`<progress class="wide" max="1" value="1" aria-label="import progress"></progress>` : html`<progress class="wide" aria-label="import progress"></progress>`}
  </div>`
}

function Result ({ job }) {
  const s = job.summary
  if (s === null) return null
  return html`
    <${Table} caption="Import result by scope" rows=${s.scopes} rowKey=${(r) => r.scope} columns=${[
      { label: 'Scope', cell: (r) => r.stored + r.duplicate > 0 ? html`<a href=${link('data', r.scope)}>${r.scope}</a>` : r.scope },
      { label: 'Stored', cell: (r) => r.stored, cls: 'num' },
      { label: 'Duplicate', cell: (r) => r.duplicate, cls: 'num' },
      { label: 'Rejected', cell: (r) => r.rejected, cls: 'num' },
      { label: 'Waiting', cell: (r) => r.waiting, cls: 'num' }
    ]} />
    ${s.rejected.length > 0 ? html`<h3>Rejected items</h3><${Table} caption="Rejected items" rows=${s.rejected} columns=${[
      { label: 'Scope', cell: (r) => r.scope },
      { label: 'Item', cell: (r) => r.label ?? fmtTime(r.collectedAt) },
      { label: 'Reasons', cell: (r) => html`<ul class="reasons">${r.reasons.slice(0, 10).map((x) => html`<li>${x}</li>`)}</ul>` }
    ]} />` : null}
    ${s.notes.length > 0 ? html`<h3>Notes from the connector</h3><ul>${s.notes.map((n) => html`<li>${n}</li>`)}</ul>` : null}`
}

function Recent () {
  const { data } = useApi('/v1/imports', { every: 5000 })
  const rows = (data?.imports ?? []).filter((j) => j.state === 'done' || j.state === 'failed')
  if (rows.length === 0) return null
  return html`<${Section} id="recent" title="Recent imports"><${Table} caption="Recent imports" rows=${rows} rowKey=${(j) => j.id} columns=${[
    { label: 'Archive', cell: (j) => j.name },
    { label: 'Connector', cell: (j) => j.connectorId ?? '–' },
    { label: 'From', cell: (j) => j.origin === 'cli' ? html`<code>hearth import</code>` : 'dashboard' },
    { label: 'When', cell: (j) => fmtTime(j.createdAt) },
    { label: 'State', cell: (j) => html`<${Badge} value=${j.state} />` },
    { label: 'Stored', cell: (j) => j.progress.stored, cls: 'num' },
    { label: 'Duplicate', cell: (j) => j.progress.duplicate, cls: 'num' },
    { label: 'Rejected', cell: (j) => j.progress.rejected, cls: 'num' }
  ]} /><//>`
}

export function ImportPage () {
  const [id, setId] = useState(null)
  const { job, error, setJob } = useJob(id)
  const adopt = (j) => { setJob(j); setId(j.id) }
  return html`
    <${Section} id="archive" title=${job === null ? 'Choose an export' : `Import of ${job.name}`} actions=${job !== null ? html`<button type="button" onClick=${() => setId(null)}>Import another</button>` : null}>
      ${job === null ? html`<${Chooser} onUploaded=${adopt} />` : null}
      ${job?.state === 'probing' ? html`<p role="status">Looking at ${job.name} to suggest a connector… <progress aria-label="looking at the archive"></progress></p>` : null}
      ${job?.state === 'ready' ? html`<${PickConnector} job=${job} onStarted=${adopt} />` : null}
      ${job !== null && job.connectorId !== null ? html`<${Progress} job=${job} />` : null}
      ${job?.error ? html`<${ErrorNote} error=${{ errorCode: job.error.code, message: job.error.message }} what="Import failed" />` : null}
      <${ErrorNote} error=${error} />
      ${job !== null ? html`<${Result} job=${job} />` : null}
    <//>
    <${Recent} />`
}
