// Runs one connector over one export and hands every item to `submit` (the daemon). Items are
// pulled from the connector only as submit slots free up, so a huge export never piles up in
// memory. Items that break the contract (undeclared scope, clock-like or malformed collectedAt,
// non-object data) are rejected here with a reason and never reach the daemon.
import { isHearthError } from '../errors.js'
import { silentLogger, type Logger } from '../log.js'
import { collectedAtProblem } from '../protocol/envelope.js'
import { scopeProblem } from '../protocol/scope.js'
import { openExport } from './source.js'
import type { Connector, ConnectorItem, ExportSource, Submit, SubmitStatus } from './types.js'

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
  reasons: string[]
}

export interface ImportSummary {
  connectorId: string
  source: { kind: ExportSource['kind']; location: string; exportedAt: string }
  /** One row per declared scope (in connector.json order), then any undeclared scope an item used. */
  scopes: ScopeCounts[]
  total: { items: number; stored: number; duplicate: number; rejected: number; waiting: number }
  rejected: RejectedItem[]
  /** What the connector wanted the user to know (missing files, skipped records). */
  notes: string[]
  /** Set when the import stopped early; the counts say what got through before. */
  failure?: { code: string; message: string }
}

export type ImportProgress =
  | { type: 'opened'; kind: ExportSource['kind']; location: string; entries: number; exportedAt: string }
  | { type: 'note'; message: string }
  | { type: 'item'; scope: string; status: SubmitStatus; done: number; label?: string; path?: string }

export interface ImportOptions {
  connector: Connector
  /** Path of the export: a zip, the folder it was unzipped into, or a single JSON file. */
  source: string
  submit: Submit
  onProgress?: (event: ImportProgress) => void
  /** Items submitted at once (default 4): the daemon encrypts and pins in parallel. */
  concurrency?: number
  logger?: Logger
}

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
  const { connector, submit } = opts
  const logger = opts.logger ?? silentLogger()
  const progress = opts.onProgress ?? (() => {})
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 4))
  const declared = new Set(connector.metadata.scopes.map((s) => s.scope))

  const source = await openExport(opts.source)
  const rows = new Map<string, ScopeCounts>()
  const row = (scope: string): ScopeCounts => {
    let r = rows.get(scope)
    if (r === undefined) { r = { scope, stored: 0, duplicate: 0, rejected: 0, waiting: 0, paths: [] }; rows.set(scope, r) }
    return r
  }
  for (const s of connector.metadata.scopes) row(s.scope)
  const summary: ImportSummary = {
    connectorId: connector.id,
    source: { kind: source.kind, location: source.location, exportedAt: source.exportedAt },
    scopes: [],
    total: { items: 0, stored: 0, duplicate: 0, rejected: 0, waiting: 0 },
    rejected: [],
    notes: []
  }
  progress({ type: 'opened', kind: source.kind, location: source.location, entries: source.entries().length, exportedAt: source.exportedAt })

  let done = 0
  const record = (item: ConnectorItem, status: SubmitStatus, reasons: string[] = [], path?: string): void => {
    const scope = typeof item?.scope === 'string' ? item.scope : '(invalid)'
    const r = row(scope)
    if (status === 'waiting-schema') r.waiting++
    else r[status]++
    if (path !== undefined && (status === 'stored' || status === 'duplicate')) r.paths.push(path)
    if (status === 'rejected') {
      summary.rejected.push({
        scope,
        collectedAt: String(item?.collectedAt),
        ...(typeof item?.label === 'string' ? { label: item.label } : {}),
        reasons: reasons.length > 0 ? reasons : ['rejected without a reason']
      })
    }
    done++
    progress({ type: 'item', scope, status, done, ...(typeof item?.label === 'string' ? { label: item.label } : {}), ...(path !== undefined ? { path } : {}) })
  }
  // A HearthError keeps its code; anything else thrown by the connector is its bug (PLUGIN_INVALID).
  const fail = (err: unknown, during: 'reading' | 'submitting'): void => {
    if (summary.failure !== undefined) return
    const code = isHearthError(err) ? err.code : during === 'reading' ? 'PLUGIN_INVALID' : 'INTERNAL'
    const message = isHearthError(err)
      ? err.message
      : during === 'reading'
        ? `connector ${connector.id} failed while reading the export: ${(err as Error)?.message ?? String(err)}`
        : `submitting an item failed: ${(err as Error)?.message ?? String(err)}`
    logger.warn({ connector: connector.id, code, err: message }, 'import stopped')
    summary.failure = { code, message }
  }

  const handle = async (item: ConnectorItem): Promise<void> => {
    const problem = itemProblem(item, declared)
    if (problem !== null) { record(item, 'rejected', [problem]); return }
    try {
      const result = await submit(item)
      record(item, result.status, result.reasons, result.path)
    } catch (err) {
      fail(err, 'submitting')
    }
  }

  const inFlight = new Set<Promise<void>>()
  try {
    const items = connector.module.read(source, {
      note: (message) => { summary.notes.push(message); progress({ type: 'note', message }) },
      logger: logger.child({ connector: connector.id })
    })
    for await (const item of items) {
      summary.total.items++
      const p: Promise<void> = handle(item).finally(() => inFlight.delete(p))
      inFlight.add(p)
      if (inFlight.size >= concurrency) await Promise.race(inFlight)
      if (summary.failure !== undefined) break
    }
  } catch (err) {
    fail(err, 'reading')
  } finally {
    await Promise.all(inFlight)
    await source.close()
  }

  summary.scopes = [...rows.values()].filter((r) => declared.has(r.scope) || r.stored + r.duplicate + r.rejected + r.waiting > 0)
  for (const r of summary.scopes) {
    summary.total.stored += r.stored
    summary.total.duplicate += r.duplicate
    summary.total.rejected += r.rejected
    summary.total.waiting += r.waiting
  }
  return summary
}
