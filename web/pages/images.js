// Images: image jobs the daemon followed (`GET /v1/images`) with their downloaded outputs
// (`GET /v1/images/{job}/files/{name}`), and the conversation list as last cached (`GET /v1/conversations`).
import { html, useApi, Section, Table, Badge, ErrorNote, Loading, fmtBytes, fmtTime } from '../lib.js'

const RASTER = /\.(png|jpe?g|webp|gif)$/i

function fileUrl (job, file) {
  return `/v1/images/${encodeURIComponent(job)}/files/${encodeURIComponent(file.name)}`
}

function Gallery () {
  const { data, error, loading } = useApi('/v1/images', { every: 5000 })
  if (loading && data === undefined) return html`<${Loading} />`
  const images = data?.images ?? []
  const outputs = images.flatMap((img) => img.files.map((f) => ({ img, f, job: img.jobId ?? img.localJobId })))
  const pending = images.filter((img) => img.files.length === 0)
  return html`
    <${ErrorNote} error=${error} />
    ${outputs.length === 0 ? html`<p class="muted">No downloaded images yet. Image jobs made through the daemon (<code>POST /api/v0/images</code>) are followed and their outputs kept under <code>images/</code>.</p>` : html`
      <ul class="gallery">${outputs.map(({ img, f, job }) => html`<li key=${`${job}/${f.name}`}>
        <figure>
          ${RASTER.test(f.name) ? html`<a href=${fileUrl(job, f)} target="_blank" rel="noopener"><img src=${fileUrl(job, f)} alt=${img.prompt ? `Image for: ${img.prompt}` : `Output ${f.name}`} loading="lazy" /></a>` : html`<a href=${fileUrl(job, f)} download>${f.name}</a>`}
          <figcaption><span class="prompt">${img.prompt ?? '(no prompt recorded)'}</span><span class="muted">${fmtTime(img.createdAt)} · ${fmtBytes(f.size)}</span></figcaption>
        </figure>
      </li>`)}</ul>`}
    ${pending.length > 0 ? html`<h3>Jobs without output yet</h3><${Table} caption="Image jobs without output" rows=${pending} rowKey=${(i) => i.localJobId ?? i.jobId} columns=${[
      { label: 'Prompt', cell: (i) => i.prompt ?? '–' },
      { label: 'State', cell: (i) => html`<${Badge} value=${i.state} />` },
      { label: 'Upstream status', cell: (i) => i.status ?? '–' },
      { label: 'Made', cell: (i) => fmtTime(i.createdAt) },
      { label: 'Error', cell: (i) => i.error ?? '–' }
    ]} />` : null}`
}

function speakerNames (c) {
  const names = (Array.isArray(c.speakers) ? c.speakers : []).map((s) => s?.name).filter((n) => typeof n === 'string')
  return names.length > 0 ? names.join(', ') : '–'
}

function Conversations () {
  const { data, error, loading } = useApi('/v1/conversations')
  if (loading && data === undefined) return html`<${Loading} />`
  return html`
    <${ErrorNote} error=${error} />
    ${data?.fetchedAt ? html`<p class="muted">As cached by the daemon at ${fmtTime(data.fetchedAt)} (readable offline).</p>` : null}
    <${Table} caption="Conversations" rows=${data?.conversations ?? []} rowKey=${(c) => c.id} empty="No conversation list cached yet: it is kept when an app lists conversations through the daemon." columns=${[
      { label: 'With', cell: (c) => speakerNames(c) },
      { label: 'Started', cell: (c) => fmtTime(c.created) },
      { label: 'Last message', cell: (c) => fmtTime(c.updated) },
      { label: 'Id', cell: (c) => html`<code>${String(c.id)}</code>` }
    ]} />`
}

export function ImagesPage () {
  return html`
    <${Section} id="gallery" title="Downloaded images"><${Gallery} /><//>
    <${Section} id="conversations" title="Conversations"><${Conversations} /><//>`
}
