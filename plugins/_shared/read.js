// @ts-check
// Helpers the shipped connectors share (the loader skips folders named _x). A file of an export
// that cannot be read — not valid JSON (real Spotify exports hold one), over the size limit, a
// zip bomb — is passed over with its reason through opts.skip, and the import goes on.

import { Readable, pipeline } from 'node:stream'
import { parse as csvParser } from 'csv-parse'

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */

/** Error codes that concern one file of the export, not the whole import. */
const FILE_PROBLEMS = new Set(['EXPORT_UNREADABLE', 'EXPORT_TOO_LARGE', 'JSON_TOO_DEEP', 'NUMBER_NOT_REPRESENTABLE', 'JSON_TOO_MANY_VALUES'])

/** @param {unknown} err @returns {err is Error & {code: string}} */
export function isFileProblem (err) {
  return err instanceof Error && FILE_PROBLEMS.has(String(/** @type {{code?: unknown}} */ (err).code))
}

/**
 * The parsed JSON of `path`, or undefined (the file is listed as skipped with the reason).
 * @param {ExportSource} source @param {string} path @param {ReadOptions} opts
 * @returns {Promise<unknown>}
 */
export async function readJsonOrSkip (source, path, opts) {
  try {
    return await source.readJson(path)
  } catch (err) {
    if (!isFileProblem(err)) throw err
    opts.skip(path, err.message)
    return undefined
  }
}

/**
 * The values at `paths` of `path` as they stream in (default: the elements of the top-level
 * array). When the file turns out broken part way, what came before is kept and the file is
 * listed as skipped with how far it got.
 * @param {ExportSource} source @param {string} path @param {ReadOptions} opts
 * @param {{paths?: string[], jsAssignment?: boolean}} [streamOpts] see ExportSource.streamJson
 * @returns {AsyncGenerator<unknown>}
 */
export async function * streamJsonOrSkip (source, path, opts, streamOpts = {}) {
  let n = 0
  try {
    for await (const value of source.streamJson(path, streamOpts)) {
      n++
      yield value
    }
  } catch (err) {
    if (!isFileProblem(err)) throw err
    opts.skip(path, n > 0 ? `${err.message} (the ${n} record(s) before the damage were read)` : err.message)
  }
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
export function isObject (v) { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** @param {unknown} v @returns {string | undefined} */
export function text (v) { return typeof v === 'string' && v.trim() !== '' ? v : undefined }

/**
 * Unix seconds → ISO 8601 UTC without fraction.
 * @param {unknown} t
 * @returns {string | undefined}
 */
export function isoSeconds (t) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return undefined
  const d = new Date(Math.floor(t) * 1000)
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace('.000Z', 'Z')
}

/**
 * `{key: value}` when value is defined, else `{}`: for spreading optional fields.
 * @template T
 * @param {string} key
 * @param {T | undefined} value
 * @returns {Record<string, T>}
 */
export function optional (key, value) { return value === undefined ? {} : { [key]: value } }

/**
 * Groups time-stamped records by UTC month ("YYYY-MM"), months in order, records in time order
 * (ties keep input order).
 * @template R
 * @param {R[]} records
 * @param {(r: R) => string} timeOf ISO time of a record
 * @returns {[string, R[]][]}
 */
export function byMonth (records, timeOf) {
  const sorted = [...records].sort((a, b) => timeOf(a) < timeOf(b) ? -1 : timeOf(a) > timeOf(b) ? 1 : 0)
  /** @type {Map<string, R[]>} */
  const months = new Map()
  for (const r of sorted) {
    const month = timeOf(r).slice(0, 7)
    const list = months.get(month)
    if (list === undefined) months.set(month, [r])
    else list.push(r)
  }
  return [...months]
}

/**
 * Files matching `pattern`, sorted by the number in their name (posts_2 before posts_10), then path.
 * @param {ExportSource} source @param {RegExp} pattern
 */
export function numberedFiles (source, pattern) {
  /** @param {string} p */
  const num = (p) => Number(/(\d+)\.\w+$/.exec(p)?.[1] ?? 0)
  return source.find(pattern).sort((a, b) => num(a.path) - num(b.path) || (a.path < b.path ? -1 : 1))
}

/**
 * The first character of an entry's text after blanks and a byte-order mark, read without the
 * rest: '[' tells a list before it is streamed. Undefined for an empty file; '?' when it cannot
 * be read (the read that follows reports why).
 * @param {ExportSource} source @param {string} path
 * @returns {Promise<string | undefined>}
 */
export async function firstCharacter (source, path) {
  try {
    for await (const chunk of source.stream(path)) {
      const t = Buffer.from(chunk).toString('utf8').replace(/^\uFEFF/, '').trimStart()
      if (t !== '') return t[0]
    }
  } catch {
    return '?'
  }
  return undefined
}

/**
 * The elements of the top-level list of `path`, streamed; a file that is empty or not a list is
 * skipped with that reason.
 * @param {ExportSource} source @param {string} path @param {ReadOptions} opts @param {string} what e.g. "plays"
 * @returns {AsyncGenerator<unknown>}
 */
export async function * streamListOrSkip (source, path, opts, what) {
  const first = await firstCharacter(source, path)
  if (first === undefined) { opts.skip(path, 'the file is empty'); return }
  if (first !== '[' && first !== '?') { opts.skip(path, `not a list of ${what}`); return }
  yield * streamJsonOrSkip(source, path, opts)
}

/**
 * Records grouped by UTC month ("YYYY-MM") as they stream in, each month's records in time order.
 * At most `maxHeld` records are held: past that, every month but the current record's is handed
 * out, since exports list their records newest (or oldest) first and the stream has moved past
 * them. A record that comes later for a month already handed out starts another group of that
 * month, so memory stays bounded whatever the file's size or order. Deterministic for one input.
 * @template R
 * @param {AsyncIterable<R>} records
 * @param {(r: R) => string} timeOf ISO time of a record
 * @param {number} maxHeld
 * @returns {AsyncGenerator<[string, R[]]>}
 */
export async function * monthsAsTheyEnd (records, timeOf, maxHeld) {
  const groups = monthGrouper(timeOf, maxHeld)
  for await (const r of records) yield * groups.add(r)
  yield * groups.end()
}

/**
 * monthsAsTheyEnd for records pushed one at a time (one file feeding several scopes): `add`
 * answers the groups handed out by that record (usually none), `end` the rest.
 * @template R
 * @param {(r: R) => string} timeOf ISO time of a record
 * @param {number} maxHeld
 * @returns {{add: (r: R) => [string, R[]][], end: () => [string, R[]][]}}
 */
export function monthGrouper (timeOf, maxHeld) {
  /** @type {Map<string, R[]>} */
  let held = new Map()
  let count = 0
  return {
    add (r) {
      const month = timeOf(r).slice(0, 7)
      const list = held.get(month)
      if (list === undefined) held.set(month, [r])
      else list.push(r)
      if (++count <= maxHeld) return []
      const current = /** @type {R[]} */ (held.get(month))
      held.delete(month)
      const out = byMonth([...held.values()].flat(), timeOf)
      held = new Map([[month, current]])
      count = current.length
      return out
    },
    end () {
      const out = byMonth([...held.values()].flat(), timeOf)
      held = new Map()
      count = 0
      return out
    }
  }
}

/**
 * A snapshot list as items of `scope`, all dated `collectedAt`: one item `{[key]: list}`, or past
 * `perItem` entries parts `{[key]: slice, part, parts}`, so a large list stays far below a request's size.
 * @template T
 * @param {{scope: string, collectedAt: string, key: string, noun: string, perItem: number}} snapshot
 * @param {T[]} list
 * @returns {import('../../src/connectors/types.js').ConnectorItem[]}
 */
export function snapshotParts ({ scope, collectedAt, key, noun, perItem }, list) {
  const parts = Math.max(1, Math.ceil(list.length / perItem))
  return Array.from({ length: parts }, (_, i) => {
    const slice = list.slice(i * perItem, (i + 1) * perItem)
    return {
      scope,
      collectedAt,
      data: { [key]: slice, ...(parts > 1 ? { part: i + 1, parts } : {}) },
      label: parts > 1 ? `${slice.length} ${noun} (part ${i + 1} of ${parts})` : `${slice.length} ${noun}`
    }
  })
}

/** A CSV row longer than this is not an export's (a post's text is at most 40,000 characters). */
const MAX_CSV_ROW_BYTES = 1024 * 1024

/**
 * The rows of a CSV entry as objects keyed by the header row (names trimmed and lower-cased), as
 * the entry streams in. A file that breaks part way is listed as skipped with how far it got.
 * @param {ExportSource} source @param {string} path @param {ReadOptions} opts
 * @returns {AsyncGenerator<Record<string, string>>}
 */
export async function * streamCsvOrSkip (source, path, opts) {
  const parser = csvParser({
    columns: (/** @type {string[]} */ header) => header.map((h) => h.trim().toLowerCase()),
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: MAX_CSV_ROW_BYTES
  })
  pipeline(Readable.from(source.stream(path)), parser, () => {}) // an error reaches the loop below through the parser
  let n = 0
  try {
    for await (const row of parser) { n++; yield row }
  } catch (err) {
    const code = String(/** @type {{code?: unknown}} */ (err)?.code ?? '')
    if (!(err instanceof Error) || (!code.startsWith('CSV_') && !isFileProblem(err))) throw err
    opts.skip(path, `not readable as CSV: ${err.message}${n > 0 ? ` (the ${n} row(s) before were read)` : ''}`)
  } finally {
    parser.destroy()
  }
}

/**
 * @typedef {{pattern: RegExp, reason: string}} KnownFile
 * A file of the export a connector knows and leaves out on purpose, and why ("holds the account's
 * e-mail, left out", "not imported yet").
 */

/**
 * Lists each entry matching one of `known` as skipped with its reason, so that only files the
 * connector truly does not know ask the user to report a layout. Called after the reading: an
 * entry the connector opened, or skipped for a reason of its own, keeps that.
 * @param {ExportSource} source @param {ReadOptions} opts @param {readonly KnownFile[]} known
 */
export function skipKnownFiles (source, opts, known) {
  const opened = source.opened()
  for (const e of source.entries()) {
    if (opened.has(e.path)) continue
    const rule = known.find((k) => k.pattern.test(e.path))
    if (rule !== undefined) opts.skip(e.path, rule.reason)
  }
}
