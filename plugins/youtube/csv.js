// @ts-check
// The CSV files of a Google Takeout (subscriptions, playlists, comments): read whole (they are
// small: one row per channel, video or comment), and Takeout's timestamps in their two spellings.
import { parse as parseCsv } from 'csv-parse/sync'

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */

/**
 * The rows of a CSV entry (header row included), or undefined when it cannot be read: the file is
 * then listed as skipped with the reason.
 * @param {ExportSource} source @param {string} path @param {ReadOptions} opts
 * @returns {Promise<string[][] | undefined>}
 */
export async function readCsvOrSkip (source, path, opts) {
  try {
    return parseCsv(await source.readText(path), { bom: true, skip_empty_lines: false, relax_column_count: true, relax_quotes: true })
  } catch (err) {
    if (!(err instanceof Error)) throw err
    const code = /** @type {{code?: string}} */ (err).code
    if (code !== undefined && !code.startsWith('CSV_') && code !== 'EXPORT_UNREADABLE' && code !== 'EXPORT_TOO_LARGE') throw err
    opts.skip(path, `not readable as CSV: ${err.message}`)
    return undefined
  }
}

/**
 * "2024-06-24T23:49:51.123+00:00", "2024-06-24T23:49:51Z" or "2020-03-04 05:06:07 UTC" → ISO
 * 8601 UTC; undefined for anything else.
 * @param {unknown} v
 * @returns {string | undefined}
 */
export function takeoutIsoTime (v) {
  if (typeof v !== 'string') return undefined
  const s = v.trim()
  const utc = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) UTC$/.exec(s)
  const iso = utc !== null ? `${utc[1]}T${utc[2]}Z` : s
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(iso)) return undefined
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}
