// Runs one connector over one export (one archive, folder or file, or several parts of it) and
// hands every item to `submit` (the daemon). Items are pulled from the connector only as submit
// slots free up, so a huge export never piles up in memory. Items that break the contract
// (undeclared scope, clock-like or malformed collectedAt, non-object data) are rejected here with
// a reason and never reach the daemon. The result names each scope, and each file of the export
// that was not imported with the reason.
import { HearthError, isHearthError } from '../errors.js'
import { silentLogger, type Logger } from '../log.js'
import { collectedAtProblem } from '../protocol/envelope.js'
import { checkValueLimits, MAX_DATA_DEPTH } from '../protocol/bounded-json.js'
import { scopeProblem } from '../protocol/scope.js'
import { openExport } from './source.js'
import type { Connector, ConnectorItem, ExportPart, ExportSource, SkippedEntry, Submit, SubmitStatus } from './types.js'

export interface ScopeCounts {
  scope: string
  stored: number
  duplicate: number
  rejected: number
  waiting: number
  /** Where the daemon keeps the files of this scope (stored and duplicate items), relative to its data folder, in the order it answered. */
  paths: string[]
}

export interface RejectedItem {
  scope: string
  collectedAt: string
  label?: string
  /** The error code of the rule the item broke, here or at the daemon (JSON_TOO_DEEP, SCHEMA_VALIDATION_FAILED, …). */
  errorCode?: string
  reasons: string[]
}

export interface ImportSummary {
  connectorId: string
  source: { kind: ExportSource['kind']; location: string; exportedAt: string; parts?: ExportPart[] }
  /** One row per declared scope (in connector.json order), then any undeclared scope an item used. */
  scopes: ScopeCounts[]
  total: { items: number; stored: number; duplicate: number; rejected: number; waiting: number }
  rejected: RejectedItem[]
  /**
   * Files of the export that were not imported, each with the reason: refused names, files the
   * connector could not read or passed over, files it does not know. Media files (which items
   * refer to by path) are counted in a note instead of listed. At most MAX_SKIPPED_LISTED rows.
   */
  skipped: SkippedEntry[]
  /** What the connector wanted the user to know (missing files, skipped records). */
  notes: string[]
  /** Set when the import stopped early; the counts say what got through before. */
  failure?: { code: string; message: string }
}

export type ImportProgress =
  | { type: 'opened'; kind: ExportSource['kind']; location: string; entries: number; exportedAt: string; parts: number }
  | { type: 'note'; message: string }
  | { type: 'skipped'; path: string; reason: string }
  | { type: 'item'; scope: string; status: SubmitStatus; done: number; label?: string; path?: string }

export interface ImportOptions {
  connector: Connector
  /** Path(s) of the export: a zip, the folder it was unzipped into, a single JSON file, or the parts of a split export (or a folder of them). */
  source: string | readonly string[]
  submit: Submit
  onProgress?: (event: ImportProgress) => void
  /** Optional scopes of the connector to import too (`--with`); the others are never read. */
  include?: readonly string[]
  /** Items submitted at once (default 4): the daemon encrypts and pins in parallel. */
  concurrency?: number
  logger?: Logger
}

/** An export of 100,000 unknown files must not make a 100,000-row result. */
export const MAX_SKIPPED_LISTED = 1000

const MEDIA = /\.(jpe?g|png|gif|webp|heic|heif|bmp|tiff?|mp4|mov|m4v|webm|avi|mkv|3gp|mp3|m4a|aac|ogg|opus|wav|flac|srt|vtt)$/i

/** Why an item breaks the connector contract, or null. Pure. */
export function itemProblem (item: unknown, declaredScopes: ReadonlySet<string>): string | null {
  if (item === null || typeof item !== 'object') return 'the connector yielded something that is not an item object'
  const { scope, collectedAt, data } = item as Partial<ConnectorItem>
  const bad = scopeProblem(scope)
  if (bad !== null) return `scope ${bad}`
  if (!declaredScopes.has(scope as string)) return `scope ${scope as string} is not declared in connector.json`
  const timeProblem = collectedAtProblem(collectedAt)
  if (timeProblem !== null) return `collectedAt ${JSON.stringify(collectedAt)} ${timeProblem}`
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'data must be a JSON object'
  return null
}

/**
 * Opening the export fails with a HearthError (NOT_FOUND, EXPORT_UNREADABLE) before anything is
 * submitted. Anything that goes wrong later — the connector throws, the daemon goes away — stops
 * the import and is reported in `failure`, with the counts of what was already submitted.
 */
export async function runImport (opts: ImportOptions): Promise<ImportSummary> {
  const logger = opts.logger ?? silentLogger()
  const optional = opts.connector.metadata.scopes.filter((s) => s.optional === true).map((s) => s.scope)
  for (const scope of opts.include ?? []) {
    if (!optional.includes(scope)) throw new HearthError('INVALID_ARGUMENT', `${scope} is not an optional scope of ${opts.connector.id}${optional.length > 0 ? ` (optional: ${optional.join(', ')})` : ''}`)
  }
  let tally: ImportTally | undefined
  // a streamed record left out for breaking a rule: listed with its file, path and code
  const source = await openExport(opts.source, {
    onRefusedRecord: (r) => { tally?.skip(`${r.path} ${r.record}`, `${r.errorCode}: ${r.message}`, r.errorCode) }
  })
  tally = new ImportTally(opts.connector, source, opts.onProgress ?? (() => {}), logger)
  try {
    await submitItems(tally, opts, source, logger)
  } finally {
    await source.close()
  }
  listWhatWasNotRead(tally, source)
  return tally.summary()
}

/** Pulls items from the connector and submits up to `concurrency` at a time; stops at the first failure. */
async function submitItems (tally: ImportTally, opts: ImportOptions, source: ExportSource, logger: Logger): Promise<void> {
  const { connector, submit } = opts
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 4))
  const declared = new Set(connector.metadata.scopes.map((s) => s.scope))
  const include = new Set(opts.include ?? [])
  const notAsked = new Set(connector.metadata.scopes.filter((s) => s.optional === true && !include.has(s.scope)).map((s) => s.scope))
  const handle = async (item: ConnectorItem): Promise<void> => {
    const problem = notAsked.has(item.scope) ? `${item.scope} is optional and was not asked for (--with ${item.scope})` : itemProblem(item, declared)
    if (problem !== null) { tally.record(item, 'rejected', [problem]); return }
    // the daemon's rules for a body, checked before it is written: JSON.stringify would turn NaN
    // and ±Infinity into null and overflow its stack on a deep value. The value count is the
    // daemon's own (its configured ingest.maxJsonValues), answered per item.
    try {
      checkValueLimits(item.data, { maxDepth: MAX_DATA_DEPTH, maxValues: Infinity, subject: 'the item\'s data' })
    } catch (err) {
      if (!isHearthError(err)) throw err
      tally.record(item, 'rejected', [`${err.code}: ${err.message}`], undefined, err.code)
      return
    }
    try {
      const result = await submit(item)
      tally.record(item, result.status, result.reasons, result.path, result.errorCode)
    } catch (err) {
      tally.fail(err, 'submitting')
    }
  }
  const inFlight = new Set<Promise<void>>()
  try {
    const items = connector.module.read(source, {
      note: (message) => { tally.note(message) },
      skip: (path, reason) => { tally.skip(path, reason) },
      logger: logger.child({ connector: connector.id }),
      include
    })
    for await (const item of items) {
      tally.itemSeen()
      const p: Promise<void> = handle(item).finally(() => inFlight.delete(p))
      inFlight.add(p)
      if (inFlight.size >= concurrency) await Promise.race(inFlight)
      if (tally.failed) break
    }
  } catch (err) {
    tally.fail(err, 'reading')
  } finally {
    await Promise.all(inFlight)
  }
}

/**
 * After the connector is done: every entry it neither read nor skipped is listed with a reason
 * (an empty category, a file it does not know), media are counted, refused names come first.
 */
function listWhatWasNotRead (tally: ImportTally, source: ExportSource): void {
  for (const r of source.refused()) tally.skip(r.path, r.reason)
  if (tally.failed) return
  const opened = source.opened()
  let media = 0
  for (const e of source.entries()) {
    if (opened.has(e.path) || tally.isSkipped(e.path)) continue
    const name = e.path.slice(e.path.lastIndexOf('/') + 1)
    if (name === 'no-data.txt') tally.skip(e.path, 'the export says this category is empty (no-data.txt)')
    else if (MEDIA.test(name)) media++
    else tally.skip(e.path, `not read: the ${tally.connectorId} connector does not know this file (plugins/README.md says how to report a layout)`)
  }
  if (media > 0) tally.note(`${media} media file(s) (photos, videos, audio) are not imported themselves; the imported data refers to them by their path in the export`)
}

/** The running counts of one import and the summary made from them. */
class ImportTally {
  readonly connectorId: string
  private readonly rows = new Map<string, ScopeCounts>()
  private readonly declared: Set<string>
  private readonly rejected: RejectedItem[] = []
  private readonly notes: string[] = []
  private readonly skipped: SkippedEntry[] = []
  private readonly skippedPaths = new Set<string>()
  private skippedUnlisted = 0
  private items = 0
  private done = 0
  private failure: { code: string; message: string } | undefined

  constructor (private readonly connector: Connector, private readonly source: ExportSource, private readonly progress: (e: ImportProgress) => void, private readonly logger: Logger) {
    this.connectorId = connector.id
    this.declared = new Set(connector.metadata.scopes.map((s) => s.scope))
    for (const s of connector.metadata.scopes) this.row(s.scope)
    progress({ type: 'opened', kind: source.kind, location: source.location, entries: source.entries().length, exportedAt: source.exportedAt, parts: source.parts().length })
  }

  get failed (): boolean { return this.failure !== undefined }

  itemSeen (): void { this.items++ }

  note (message: string): void {
    this.notes.push(message)
    this.progress({ type: 'note', message })
  }

  skip (path: string, reason: string, errorCode?: string): void {
    if (this.skippedPaths.has(path)) return
    this.skippedPaths.add(path)
    if (this.skipped.length < MAX_SKIPPED_LISTED) this.skipped.push({ path, reason, ...(errorCode !== undefined ? { errorCode } : {}) })
    else this.skippedUnlisted++
    this.progress({ type: 'skipped', path, reason })
  }

  isSkipped (path: string): boolean { return this.skippedPaths.has(path) }

  record (item: ConnectorItem, status: SubmitStatus, reasons: string[] = [], path?: string, errorCode?: string): void {
    const scope = typeof item?.scope === 'string' ? item.scope : '(invalid)'
    const r = this.row(scope)
    if (status === 'waiting-schema') r.waiting++
    else r[status]++
    if (path !== undefined && (status === 'stored' || status === 'duplicate')) r.paths.push(path)
    const label = typeof item?.label === 'string' ? { label: item.label } : {}
    if (status === 'rejected') {
      this.rejected.push({ scope, collectedAt: String(item?.collectedAt), ...label, ...(errorCode !== undefined ? { errorCode } : {}), reasons: reasons.length > 0 ? reasons : ['rejected without a reason'] })
    }
    this.done++
    this.progress({ type: 'item', scope, status, done: this.done, ...label, ...(path !== undefined ? { path } : {}) })
  }

  // A HearthError keeps its code; anything else thrown by the connector is its bug (PLUGIN_INVALID).
  fail (err: unknown, during: 'reading' | 'submitting'): void {
    if (this.failure !== undefined) return
    const code = isHearthError(err) ? err.code : during === 'reading' ? 'PLUGIN_INVALID' : 'INTERNAL'
    const message = isHearthError(err)
      ? err.message
      : during === 'reading'
        ? `connector ${this.connectorId} failed while reading the export: ${(err as Error)?.message ?? String(err)}`
        : `submitting an item failed: ${(err as Error)?.message ?? String(err)}`
    this.logger.warn({ connector: this.connectorId, code, err: message }, 'import stopped')
    this.failure = { code, message }
  }

  summary (): ImportSummary {
    const scopes = [...this.rows.values()].filter((r) => this.declared.has(r.scope) || r.stored + r.duplicate + r.rejected + r.waiting > 0)
    const total = { items: this.items, stored: 0, duplicate: 0, rejected: 0, waiting: 0 }
    for (const r of scopes) {
      total.stored += r.stored
      total.duplicate += r.duplicate
      total.rejected += r.rejected
      total.waiting += r.waiting
    }
    const notes = this.skippedUnlisted > 0 ? [...this.notes, `${this.skippedUnlisted} more file(s) not imported are not listed`] : this.notes
    const parts = this.source.parts()
    return {
      connectorId: this.connector.id,
      source: { kind: this.source.kind, location: this.source.location, exportedAt: this.source.exportedAt, ...(parts.length > 1 ? { parts: [...parts] } : {}) },
      scopes,
      total,
      rejected: this.rejected,
      skipped: this.skipped,
      notes,
      ...(this.failure !== undefined ? { failure: this.failure } : {})
    }
  }

  private row (scope: string): ScopeCounts {
    let r = this.rows.get(scope)
    if (r === undefined) { r = { scope, stored: 0, duplicate: 0, rejected: 0, waiting: 0, paths: [] }; this.rows.set(scope, r) }
    return r
  }
}
