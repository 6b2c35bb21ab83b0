// A stored version's data as a model may see it: one page of records, never the whole file. The
// records are the items of the list a JSON pointer names (by default the data's largest list);
// each is clipped (long strings cut, long inner lists and deep nesting summarised with the pointer
// to read them at), and the page ends before its JSON would pass the byte budget. Pure.
import { HearthError } from '../errors.js'

export interface RecordsPage {
  /** The list (or value) read, as a JSON pointer into the envelope's `data`. */
  pointer: string
  /** `list`: items from `offset`; `value`: the one value at `pointer`. */
  kind: 'list' | 'value'
  total: number
  offset: number
  records: Array<{ pointer: string; value: unknown }>
  /** The offset of the next page, or null. */
  next: number | null
  /** True when a value had to be shortened (its parts are readable at the pointers given). */
  clipped: boolean
}

const MAX_STRING = 2_000
const MAX_INNER_ITEMS = 20
const MAX_DEPTH = 6
const MAX_POINTER = 1_024

function escapeToken (key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}

/** The value at an RFC 6901 pointer; NOT_FOUND when nothing is there. */
export function atPointer (data: unknown, pointer: string): unknown {
  if (pointer === '') return data
  if (pointer.length > MAX_POINTER || !pointer.startsWith('/')) throw new HearthError('INVALID_ARGUMENT', 'pointer must be a JSON pointer ("" or "/key/0/…") of at most 1024 characters')
  let node: unknown = data
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (Array.isArray(node) && /^(0|[1-9]\d{0,8})$/.test(token) && Number(token) < node.length) node = node[Number(token)]
    else if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, token)) node = (node as Record<string, unknown>)[token]
    else throw new HearthError('NOT_FOUND', `nothing at ${pointer.slice(0, 200)} in this version`)
  }
  return node
}

/** The pointer of the data's largest list (breadth first, a few levels down), or "" when it has none. */
export function mainList (data: unknown): string {
  let best = ''
  let bestSize = Array.isArray(data) ? data.length : -1
  let level: Array<[string, unknown]> = [['', data]]
  for (let depth = 0; depth < 3 && level.length > 0; depth++) {
    const next: Array<[string, unknown]> = []
    for (const [p, v] of level) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) continue
      for (const [k, child] of Object.entries(v)) {
        const cp = `${p}/${escapeToken(k)}`
        if (Array.isArray(child) && child.length > bestSize) { best = cp; bestSize = child.length }
        else if (child !== null && typeof child === 'object') next.push([cp, child])
      }
    }
    level = next.slice(0, 200)
  }
  return best
}

/** A copy of `value` a model can take: long strings cut, long lists and deep parts replaced by where to read them. */
export function clip (value: unknown, pointer: string, depth = 0, note: { clipped: boolean } = { clipped: false }): unknown {
  if (typeof value === 'string') {
    if (value.length <= MAX_STRING) return value
    note.clipped = true
    return `${value.slice(0, MAX_STRING)}… [${value.length - MAX_STRING} more characters]`
  }
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH) { note.clipped = true; return { $more: pointer } }
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_INNER_ITEMS).map((v, i) => clip(v, `${pointer}/${i}`, depth + 1, note))
    if (value.length > MAX_INNER_ITEMS) { note.clipped = true; shown.push({ $more: pointer, items: value.length }) }
    return shown
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = clip(v, `${pointer}/${escapeToken(k)}`, depth + 1, note)
  return out
}

/** One page of the records at `pointer` (default: the main list), within `maxBytes` of JSON. */
export function recordsPage (data: unknown, opts: { pointer?: string; offset?: number; limit?: number; maxBytes: number }): RecordsPage {
  const pointer = opts.pointer ?? mainList(data)
  const node = atPointer(data, pointer)
  const note = { clipped: false }
  if (!Array.isArray(node)) {
    let value = clip(node, pointer, 0, note)
    if (JSON.stringify(value).length > opts.maxBytes) {
      // an object too wide for one answer: its keys, each readable at its own pointer
      note.clipped = true
      value = { $keys: Object.keys(node as object).slice(0, 200).map((k) => `${pointer}/${escapeToken(k)}`) }
    }
    return { pointer, kind: 'value', total: 1, offset: 0, records: [{ pointer, value }], next: null, clipped: note.clipped }
  }
  const offset = Math.min(opts.offset ?? 0, node.length)
  const limit = opts.limit ?? 50
  const records: RecordsPage['records'] = []
  let bytes = 0
  let i = offset
  for (; i < node.length && records.length < limit; i++) {
    const record = { pointer: `${pointer}/${i}`, value: clip(node[i], `${pointer}/${i}`, 0, note) }
    const size = JSON.stringify(record).length + 1
    if (bytes + size > opts.maxBytes && records.length > 0) break
    if (size > opts.maxBytes) { note.clipped = true; records.push({ pointer: record.pointer, value: { $tooLarge: record.pointer } }); i++; break }
    records.push(record)
    bytes += size
  }
  return { pointer, kind: 'list', total: node.length, offset, records, next: i < node.length ? i : null, clipped: note.clipped }
}
