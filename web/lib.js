// Shared pieces of the dashboard: the `html` template tag (htm bound to Preact), calls to the
// daemon's JSON routes (the same ones the CLI uses), a polling hook, and small components.
import { h } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import htm from 'htm'

export const html = htm.bind(h)

export class ApiError extends Error {
  constructor (status, body) {
    const e = body?.error ?? {}
    super(typeof e.message === 'string' ? e.message : `the daemon answered HTTP ${status}`)
    this.status = status
    this.errorCode = typeof e.errorCode === 'string' ? e.errorCode : `HTTP_${status}`
    this.details = e.details
  }
}

const sessionListeners = new Set()
/** Called with no argument when a request finds the session gone (daemon restarted, logged out). */
export function onSessionLost (fn) { sessionListeners.add(fn); return () => sessionListeners.delete(fn) }

/**
 * One call to the daemon. `body` is sent as JSON unless `raw` is set (a File or Blob, sent as is).
 * Resolves with the parsed JSON answer (or the Response when `response` is set); throws ApiError.
 */
export async function api (path, { method = 'GET', body, raw, headers = {}, response = false, signal } = {}) {
  const init = { method, headers: { ...headers }, credentials: 'same-origin', signal }
  if (raw !== undefined) init.body = raw
  else if (body !== undefined) { init.body = JSON.stringify(body); init.headers['content-type'] = 'application/json' }
  const res = await fetch(path, init)
  if (response && res.ok) return res
  const text = await res.text()
  let json
  try { json = text.length > 0 ? JSON.parse(text) : undefined } catch { json = undefined }
  if (!res.ok) {
    const err = new ApiError(res.status, json)
    if (err.errorCode === 'UI_SESSION_REQUIRED') for (const fn of sessionListeners) fn()
    throw err
  }
  return json
}

/**
 * Loads `path` (null = nothing yet) and, with `every` ms, reloads it while the page is visible,
 * so a page stays live without a reload. Returns {data, error, loading, reload}.
 */
export function useApi (path, { every = 0 } = {}) {
  const [state, setState] = useState({ data: undefined, error: null, loading: path !== null })
  const current = useRef(path)
  current.current = path
  const load = useCallback(async () => {
    if (path === null) return
    try {
      const data = await api(path)
      if (current.current === path) setState({ data, error: null, loading: false })
    } catch (error) {
      if (current.current === path) setState((s) => ({ data: s.data, error, loading: false }))
    }
  }, [path])
  useEffect(() => {
    setState({ data: undefined, error: null, loading: path !== null })
    void load()
    if (every <= 0) return
    const timer = setInterval(() => { if (!document.hidden) void load() }, every)
    return () => clearInterval(timer)
  }, [load, every])
  return { ...state, reload: load }
}

/** Runs an action (a POST, a DELETE…) and keeps its state for the button and the message. */
export function useAction (fn) {
  const [state, setState] = useState({ busy: false, error: null, result: undefined })
  const run = useCallback(async (...args) => {
    setState({ busy: true, error: null, result: undefined })
    try {
      const result = await fn(...args)
      setState({ busy: false, error: null, result })
      return result
    } catch (error) {
      setState({ busy: false, error, result: undefined })
      return undefined
    }
  }, [fn])
  return { ...state, run }
}

// ---- formatting

export function fmtBytes (n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '–'
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++ }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`
}

export function fmtTime (value) {
  if (value === null || value === undefined || value === '') return '–'
  const d = typeof value === 'number' ? new Date(value) : new Date(String(value))
  if (Number.isNaN(d.getTime())) return String(value)
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

export function fmtAgo (ms) {
  if (typeof ms !== 'number') return 'never'
  const s = Math.round((Date.now() - ms) / 1000)
  if (s < 60) return `${Math.max(0, s)} s ago`
  if (s < 3600) return `${Math.round(s / 60)} min ago`
  if (s < 86400) return `${Math.round(s / 3600)} h ago`
  return `${Math.round(s / 86400)} days ago`
}

export function shortId (s, keep = 10) {
  if (typeof s !== 'string') return '–'
  return s.length <= keep * 2 + 1 ? s : `${s.slice(0, keep)}…${s.slice(-6)}`
}

// ---- components

export function ErrorNote ({ error, what }) {
  if (error === null || error === undefined) return null
  return html`<p class="note error" role="alert"><strong>${what ?? 'Error'}${error.errorCode ? ` (${error.errorCode})` : ''}:</strong> ${error.message}${
    Array.isArray(error.details?.reasons) ? html`<ul>${error.details.reasons.slice(0, 20).map((r) => html`<li>${String(r)}</li>`)}</ul>` : null}</p>`
}

export function Loading ({ what = 'Loading' }) {
  return html`<p class="muted" role="status">${what}…</p>`
}

export function Section ({ title, actions, children, id }) {
  return html`<section class="card" aria-labelledby=${id}>
    <div class="card-head"><h2 id=${id}>${title}</h2>${actions ? html`<div class="actions">${actions}</div>` : null}</div>
    ${children}
  </section>`
}

/** A definition list of [label, value] rows. */
export function Facts ({ rows }) {
  return html`<dl class="facts">${rows.filter((r) => r !== null).map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`
}

/** columns: [{label, cell: (row) => node, cls?}]; wide tables scroll inside their box on phones. */
export function Table ({ caption, columns, rows, empty = 'Nothing here yet.', rowKey }) {
  if (!rows || rows.length === 0) return html`<p class="muted">${empty}</p>`
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${caption}>
    <table>
      <caption class="sr-only">${caption}</caption>
      <thead><tr>${columns.map((c) => html`<th scope="col" class=${c.cls ?? ''}>${c.label}</th>`)}</tr></thead>
      <tbody>${rows.map((r, i) => html`<tr key=${rowKey ? rowKey(r) : i}>${columns.map((c) => html`<td class=${c.cls ?? ''} data-label=${c.label}>${c.cell(r)}</td>`)}</tr>`)}</tbody>
    </table>
  </div>`
}

export function Badge ({ value, tone }) {
  const t = tone ?? ({ stored: 'ok', registered: 'ok', ok: 'ok', online: 'ok', active: 'ok', approved: 'ok', done: 'ok', rejected: 'bad', failed: 'bad', revoked: 'bad', denied: 'bad', expired: 'bad', 'waiting-schema': 'warn', pending: 'warn', queued: 'warn', running: 'warn', offline: 'muted', deleted: 'muted' }[value] ?? 'muted')
  return html`<span class=${`badge ${t}`}>${value}</span>`
}

export function Pager ({ offset, limit, total, onPage, label }) {
  if (total <= limit) return null
  const page = Math.floor(offset / limit) + 1
  const pages = Math.max(1, Math.ceil(total / limit))
  return html`<nav class="pager" aria-label=${label ?? 'Pages'}>
    <button type="button" disabled=${offset === 0} onClick=${() => onPage(Math.max(0, offset - limit))}>← Newer</button>
    <span aria-live="polite">Page ${page} of ${pages}</span>
    <button type="button" disabled=${offset + limit >= total} onClick=${() => onPage(offset + limit)}>Older →</button>
  </nav>`
}

/**
 * A modal confirmation (the native <dialog>: focus moves into it, Escape closes it). `open`
 * decides whether it shows; onConfirm/onCancel are called from its buttons.
 */
export function Confirm ({ open, title, children, confirmLabel = 'Confirm', danger = false, onConfirm, onCancel, busy = false }) {
  const ref = useRef(null)
  useEffect(() => {
    const d = ref.current
    if (d === null) return
    if (open && !d.open) d.showModal()
    if (!open && d.open) d.close()
  }, [open])
  return html`<dialog ref=${ref} aria-labelledby="confirm-title" onCancel=${(e) => { e.preventDefault(); onCancel() }}>
    <h2 id="confirm-title">${title}</h2>
    <div>${children}</div>
    <div class="actions end">
      <button type="button" onClick=${onCancel}>Cancel</button>
      <button type="button" class=${danger ? 'danger' : 'primary'} disabled=${busy} onClick=${onConfirm}>${confirmLabel}</button>
    </div>
  </dialog>`
}

/** The current hash route as its segments: `#/data/x.y` → ['data', 'x.y']. */
export function useRoute () {
  const parse = () => (location.hash.replace(/^#\/?/, '') || 'overview').split('/').map((s) => { try { return decodeURIComponent(s) } catch { return s } })
  const [route, setRoute] = useState(parse)
  useEffect(() => {
    const on = () => setRoute(parse())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}

export function link (...parts) {
  return '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/')
}

/** Saves bytes (or a JSON value) as a download. */
export function download (name, content, type = 'application/json') {
  const blob = content instanceof Blob ? content : new Blob([typeof content === 'string' ? content : JSON.stringify(content, null, 2)], { type })
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
