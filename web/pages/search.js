// Search: `GET /v1/search` (the same call as `hearth search`) over every stored version. Each hit
// is one record: its scope, time, field and a snippet with the matched words marked; it opens
// the version on the Data page at that record. The words are in the address (#/search/<words>),
// so a search can be bookmarked and the header's search box lands here.
import { useEffect, useState } from 'preact/hooks'
import { api, html, link, fmtTime, Section, ErrorNote, Loading } from '../lib.js'

const PAGE = 20

/** The snippet as text with <mark>s at the answer's offsets (the text itself is never HTML). */
function Snippet ({ hit }) {
  const parts = []
  let at = 0
  for (const [start, end] of hit.marks) {
    if (start < at || end > hit.snippet.length) continue
    parts.push(hit.snippet.slice(at, start), html`<mark>${hit.snippet.slice(start, end)}</mark>`)
    at = end
  }
  parts.push(hit.snippet.slice(at))
  return html`<p class="snippet">${parts}</p>`
}

function Hit ({ hit }) {
  return html`<li class="hit">
    <a href=${link('data', hit.scope, hit.collectedAt, hit.pointer)}><strong>${hit.scope}</strong> · ${fmtTime(hit.at ?? hit.collectedAt)}</a>
    <span class="muted"> ${hit.field}${hit.pointer === '' ? '' : ` at ${hit.pointer}`}</span>
    <${Snippet} hit=${hit} />
  </li>`
}

function searchPath (q, filters, cursor) {
  const params = new URLSearchParams({ q, limit: String(PAGE) })
  for (const [k, v] of Object.entries(filters)) if (v !== '') params.set(k, v)
  if (cursor) params.set('cursor', cursor)
  return `/v1/search?${params.toString()}`
}

export function SearchPage ({ route }) {
  const q = route[0] ?? ''
  const [text, setText] = useState(q)
  const [filters, setFilters] = useState({ scope: '', since: '', until: '' })
  const [state, setState] = useState({ hits: [], next: null, answer: null, error: null, loading: false })
  useEffect(() => { setText(q) }, [q])
  const load = async (cursor) => {
    setState((s) => ({ ...s, loading: true, error: null, ...(cursor ? {} : { hits: [], next: null, answer: null }) }))
    try {
      const answer = await api(searchPath(q, filters, cursor))
      setState((s) => ({ hits: [...(cursor ? s.hits : []), ...answer.hits], next: answer.next, answer, error: null, loading: false }))
    } catch (error) {
      setState((s) => ({ ...s, error, loading: false }))
    }
  }
  useEffect(() => { if (q.trim() !== '') void load(null) }, [q, filters.scope, filters.since, filters.until])
  const submit = (e) => { e.preventDefault(); location.hash = link('search', text.trim()) }
  const filter = (key) => (e) => setFilters({ ...filters, [key]: e.currentTarget.value.trim() })
  const { answer } = state
  return html`
    <form class="search-form" role="search" onSubmit=${submit}>
      <label>Words to find <input type="search" name="q" value=${text} onInput=${(e) => setText(e.currentTarget.value)} placeholder='lease, "kind of blue", photo*' /></label>
      <div class="filters">
        <label>Scope <input type="text" value=${filters.scope} onChange=${filter('scope')} placeholder="instagram.*" /></label>
        <label>From <input type="date" value=${filters.since} onChange=${filter('since')} /></label>
        <label>Before <input type="date" value=${filters.until} onChange=${filter('until')} /></label>
      </div>
      <button type="submit">Search</button>
    </form>
    <p class="muted">Words must all appear; a trailing * finds words starting so; "quotes" find a phrase.</p>
    <${ErrorNote} error=${state.error} what="Search failed" />
    ${q.trim() === '' ? null : html`<${Section} id="results" title="Results">
      ${answer && !answer.complete ? html`<p class="note" role="status">Still indexing (${answer.pending} changes to go): these results may miss some records.</p>` : null}
      ${state.loading && state.hits.length === 0 ? html`<${Loading} what="Searching" />` : null}
      ${answer && state.hits.length === 0 && !state.loading ? html`<p>No records found for <strong>${q}</strong>.</p>` : null}
      <ol class="hits">${state.hits.map((hit) => html`<${Hit} key=${`${hit.path} ${hit.pointer} ${hit.field}`} hit=${hit} />`)}</ol>
      ${state.next ? html`<button type="button" disabled=${state.loading} onClick=${() => load(state.next)}>More results</button>` : null}
    <//>`}`
}
