// The records of one version, as the search index sees them (pure, no I/O). A version's `data` is
// walked once: every object that is an element of an array (a message, a play, a post) is a
// record of its own, addressed by its JSON pointer; the root object is the record `""` (a
// conversation's title). A record's text fields are its strings, named by their path inside the
// record (`text`, `share.text`); strings in nested plain objects and in lists of strings belong to
// the record that holds them. Hostile data is bounded: depth, records, rows and text per version.

/** What a scope declares searchable (connector metadata `search`, see plugins/README.md). */
export interface SearchSpec {
  /** Field names (paths inside a record, `share.text`) to index; undefined: every string field. */
  fields?: readonly string[]
  /** Field names that hold a record's time; undefined: the first ISO 8601 string named `*At`, `time`, `timestamp` or `date`. */
  time?: readonly string[]
  /** `latest`: only the scope's latest version is searched (a snapshot per export); `all` (default): every version. */
  versions?: 'all' | 'latest'
}

export interface ExtractLimits {
  /** Deepest nesting walked (deeper values are not indexed). */
  maxDepth: number
  /** Most text rows (one per record field) per version. */
  maxRows: number
  /** Longest text of one field kept (UTF-16 units; the rest is not indexed). */
  maxFieldChars: number
  /** Most text kept over all rows (UTF-16 units); past it the walk stops (`stopped`). Default: no limit. */
  maxChars?: number
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = { maxDepth: 64, maxRows: 200_000, maxFieldChars: 16_384 }

export interface TextRow {
  /** JSON pointer (RFC 6901) of the record inside the envelope's `data`. */
  pointer: string
  field: string
  text: string
  /** The record's own time (ISO 8601) when it has one. */
  at: string | null
}

export interface Extracted {
  rows: TextRow[]
  /** True when a limit left part of the version out. */
  truncated: boolean
  /** True when maxChars stopped the walk. */
  stopped?: boolean
}

const TIME_NAME = /(?:At|_at|^time|^timestamp|^date)$/
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/** `iso` as ms since the epoch when it is an ISO 8601 date or instant; null otherwise. */
export function instantMs (iso: string): number | null {
  if (iso.length > 40 || !ISO_INSTANT.test(iso)) return null
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? ms : null
}

function escapePointer (key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

interface RecordState { pointer: string; at: string | null; rows: TextRow[] }

export function extractRows (data: unknown, spec: SearchSpec = {}, limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS): Extracted {
  const fields = spec.fields === undefined ? null : new Set(spec.fields)
  const timeFields = spec.time === undefined ? null : new Set(spec.time)
  const out: TextRow[] = []
  let truncated = false
  const maxChars = limits.maxChars ?? Infinity
  let chars = 0
  let stopped = false

  const isTimeField = (name: string): boolean => timeFields !== null ? timeFields.has(name) : TIME_NAME.test(name.slice(name.lastIndexOf('.') + 1))

  const addString = (record: RecordState, name: string, value: string): void => {
    if (record.at === null && isTimeField(name) && instantMs(value) !== null) record.at = value
    if (fields !== null && !fields.has(name)) return
    if (value.trim() === '') return
    if (out.length + record.rows.length >= limits.maxRows || stopped) { truncated = true; return }
    let text = value
    if (text.length > limits.maxFieldChars) { text = text.slice(0, limits.maxFieldChars); truncated = true }
    chars += text.length
    if (chars > maxChars) { truncated = stopped = true; return }
    record.rows.push({ pointer: record.pointer, field: name, text, at: null })
  }

  const flush = (record: RecordState): void => {
    for (const row of record.rows) { row.at = record.at; out.push(row) }
  }

  // iterative walk: a hostile depth never reaches the call stack's limit
  const walkRecord = (root: Record<string, unknown>, pointer: string, depth: number): void => {
    const record: RecordState = { pointer, at: null, rows: [] }
    const nested: Array<{ value: unknown[]; pointer: string; depth: number; name: string }> = []
    const stack: Array<{ value: unknown; name: string; pointer: string; depth: number }> = []
    for (const key of Object.keys(root).reverse()) stack.push({ value: root[key], name: key, pointer: `${pointer}/${escapePointer(key)}`, depth: depth + 1 })
    while (stack.length > 0) {
      const { value, name, pointer: at, depth: d } = stack.pop()!
      if (d > limits.maxDepth) { truncated = true; continue }
      if (typeof value === 'string') addString(record, name, value)
      else if (Array.isArray(value)) {
        if (value.some((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) nested.push({ value, pointer: at, depth: d, name })
        else for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], name, pointer: `${at}/${i}`, depth: d + 1 })
      } else if (value !== null && typeof value === 'object') {
        const obj = value as Record<string, unknown>
        for (const key of Object.keys(obj).reverse()) stack.push({ value: obj[key], name: `${name}.${key}`, pointer: `${at}/${escapePointer(key)}`, depth: d + 1 })
      }
    }
    flush(record)
    for (const list of nested) walkList(list.value, list.pointer, list.depth, list.name)
  }

  const walkList = (list: unknown[], pointer: string, depth: number, name: string): void => {
    const loose: RecordState = { pointer, at: null, rows: [] }
    for (let i = 0; i < list.length; i++) {
      if (out.length >= limits.maxRows || stopped) { truncated = true; return }
      const item = list[i]
      if (depth + 1 > limits.maxDepth) { truncated = true; return }
      if (typeof item === 'string') addString(loose, name, item)
      else if (Array.isArray(item)) walkList(item, `${pointer}/${i}`, depth + 1, name)
      else if (item !== null && typeof item === 'object') walkRecord(item as Record<string, unknown>, `${pointer}/${i}`, depth + 1)
    }
    flush(loose)
  }

  if (Array.isArray(data)) walkList(data, '', 0, '')
  else if (data !== null && typeof data === 'object') walkRecord(data as Record<string, unknown>, '', 0)
  return stopped ? { rows: out, truncated, stopped } : { rows: out, truncated }
}
