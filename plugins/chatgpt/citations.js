// @ts-check
// Web-search answers in a ChatGPT export carry their citations twice: as private-use markers in
// the text, and as sources in the message's metadata. The markers are
//   U+E200 kind U+E202 payload U+E201   e.g. "cite" + "turn0search5" (U+E202 between several refs),
//                                       "entity" + ["people","Ada Lovelace",…] (shown as the name),
//                                       "image_group", "navlist", "filecite", …
//   U+E203 … U+E204                     the span a citation covers (the text stays, the marks go)
//   【11†source】, 【{"image_fetch":…}】    the older browsing tool's markers
// and the sources are metadata.content_references ({matched_text, type, items: [{url, title,
// attribution}], …}) or, in older exports, metadata.citations ({start_ix, end_ix, metadata:
// {url, title}}). The text is cleaned of every marker; the cited pages become `sources` (each
// once) and `citations` (where in the cleaned text a marker stood, and which sources it named).
// Text that merely uses 【 】 as brackets (Chinese and Japanese do) is left alone.

import { isObject, text } from '../_shared/read.js'

/** @typedef {{url: string, title?: string, attribution?: string}} Source */
/** @typedef {{at: number, sources: number[]}} Citation */

// Bounded, so a hostile text cannot make a match scan far.
const MARKER = /\uE200([^\uE200-\uE202]{0,64})\uE202([^\uE200\uE201]{0,8192})\uE201|【[^【】\n]{0,2048}】|[\uE200-\uE206]/g
const OLD_MARKER = /^【(\d+(:\d+)?†[^】]*|\{[^】]*\})】$/

/**
 * @param {string} raw the message's text
 * @param {Record<string, unknown>} metadata the message's metadata
 * @param {Source[]} [quoted] sources the content itself names (a tether_quote's page)
 * @returns {{text: string, sources: Source[], citations: Citation[]}}
 */
export function cleanCitations (raw, metadata, quoted = []) {
  const refs = referencesByMarker(raw, metadata)
  /** @type {Source[]} */
  const sources = []
  const at = new Map()
  /** @param {Source[]} list @returns {number[]} */
  const add = (list) => list.map((s) => {
    let i = at.get(s.url)
    if (i === undefined) { i = sources.length; at.set(s.url, i); sources.push(s) } else if (sources[i]?.title === undefined && s.title !== undefined) sources[i] = { ...s }
    return /** @type {number} */ (i)
  })
  add(quoted)
  /** @type {Citation[]} */
  const citations = []
  let out = ''
  let last = 0
  for (const m of raw.matchAll(MARKER)) {
    const index = /** @type {number} */ (m.index)
    out += raw.slice(last, index)
    last = index + m[0].length
    const ref = refs.get(m[0])
    const cited = ref === undefined ? [] : [...new Set(add(sourcesOf(ref)))]
    let replacement = ''
    if (m[1] === 'entity' || ref?.type === 'entity') replacement = text(ref?.name) ?? entityName(m[2] ?? '')
    else if (ref === undefined && m[0].startsWith('【') && !OLD_MARKER.test(m[0])) replacement = m[0] // brackets in ordinary text
    if (replacement === '') out = out.slice(0, trimmedLength(out, raw, last))
    out += replacement
    if (cited.length > 0) citations.push({ at: out.length, sources: cited })
  }
  out += raw.slice(last)
  // a footnote list of sources ("sources_footnote") names pages without a marker in the text
  for (const ref of listOf(metadata.content_references)) if (ref.type === 'sources_footnote') add(sourcesOf(ref))
  return { text: out, sources, citations }
}

/**
 * The length `out` keeps when a marker is removed after it: a space before the marker goes when
 * the text after it starts with a space, punctuation or nothing.
 * @param {string} out @param {string} raw @param {number} after
 */
function trimmedLength (out, raw, after) {
  return out.endsWith(' ') && (after >= raw.length || /^[\s.,;:!?)\]]/.test(raw.slice(after, after + 1))) ? out.length - 1 : out.length
}

/**
 * Marker text → its reference: content_references by their matched_text, older citations by the
 * text between their start_ix and end_ix.
 * @param {string} raw @param {Record<string, unknown>} metadata
 * @returns {Map<string, Record<string, unknown>>}
 */
function referencesByMarker (raw, metadata) {
  /** @type {Map<string, Record<string, unknown>>} */
  const refs = new Map()
  for (const ref of listOf(metadata.content_references)) {
    const key = ref.matched_text
    if (typeof key === 'string' && key.trim() !== '' && !refs.has(key)) refs.set(key, ref)
  }
  for (const c of listOf(metadata.citations)) {
    const { start_ix: start, end_ix: end } = c
    if (!Number.isInteger(start) || !Number.isInteger(end) || !isObject(c.metadata)) continue
    const key = raw.slice(/** @type {number} */ (start), /** @type {number} */ (end))
    if (key !== '' && !refs.has(key)) refs.set(key, c.metadata)
  }
  return refs
}

/**
 * The web pages a reference names: grouped results (`items`), a footnote list (`sources`), or
 * the reference itself when it has a URL.
 * @param {Record<string, unknown>} ref
 * @returns {Source[]}
 */
function sourcesOf (ref) {
  const list = Array.isArray(ref.items) ? ref.items : Array.isArray(ref.sources) ? ref.sources : [ref]
  /** @type {Source[]} */
  const out = []
  for (const s of list) {
    if (!isObject(s)) continue
    const url = httpUrl(s.url)
    if (url === undefined) continue
    const title = text(s.title)
    const attribution = text(s.attribution)
    out.push({ url, ...(title !== undefined ? { title } : {}), ...(attribution !== undefined ? { attribution } : {}) })
  }
  return out
}

/** @param {string} payload e.g. ["people","Ada Lovelace","English mathematician"] @returns {string} */
function entityName (payload) {
  try {
    const decoded = JSON.parse(payload)
    return Array.isArray(decoded) ? text(decoded[1]) ?? text(decoded[0]) ?? '' : ''
  } catch {
    return ''
  }
}

/** @param {unknown} v @returns {Record<string, unknown>[]} */
function listOf (v) { return Array.isArray(v) ? v.filter(isObject) : [] }

/** @param {unknown} v @returns {string | undefined} */
export function httpUrl (v) { return typeof v === 'string' && /^https?:\/\/\S+$/.test(v) && v.length <= 4096 ? v : undefined }
