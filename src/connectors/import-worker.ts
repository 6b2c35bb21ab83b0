// The child process behind dashboard imports (import-jobs.ts forks it): connector plugins are
// third-party code, so they never run inside the daemon that holds the owner's keys. It does
// what `hearth import` does in the CLI process — reads the export and submits items over the
// owner socket — and reports to its parent over the IPC channel. One request per process, given
// as JSON in argv[2]:
//   {mode: 'probe', source, dirs}                          → {type: 'suggestions', ...}
// (source: one archive, or every part of an export split into several)
//   {mode: 'import', source, dirs, connectorId, include?, socketPath} → {type: 'progress'}*, {type: 'summary'}
import { silentLogger } from '../log.js'
import { isHearthError } from '../errors.js'
import { findConnector, loadConnectors } from './loader.js'
import { openExport } from './source.js'
import { runImport, type ImportProgress } from './import.js'
import { daemonSubmit } from './submit.js'
import type { Connector, ExportSource } from './types.js'

export type WorkerRequest =
  | { mode: 'probe'; source: string | string[]; dirs: string[] }
  | { mode: 'import'; source: string | string[]; dirs: string[]; connectorId: string; include?: string[]; socketPath: string }

export interface Suggestion { connectorId: string; displayName: string; matches: boolean; firstScope?: string }

export type WorkerMessage =
  | { type: 'suggestions'; entries: number; connectors: Suggestion[] }
  | { type: 'progress'; events: ImportProgress[] }
  | { type: 'summary'; summary: unknown }
  | { type: 'error'; code: string; message: string }

/** How long one connector may take to yield its first item while probing. */
const PROBE_MS = 15_000

function send (message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => { process.send!(message, () => resolve()) })
}

/** A connector fits the export when reading it yields at least one item. */
async function probeOne (connector: Connector, source: ExportSource): Promise<Suggestion> {
  const base = { connectorId: connector.id, displayName: connector.metadata.displayName }
  const items = connector.module.read(source, { note: () => {}, skip: () => {}, logger: silentLogger() })[Symbol.asyncIterator]()
  let timer: NodeJS.Timeout | undefined
  try {
    const first = await Promise.race([
      items.next(),
      new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), PROBE_MS) })
    ])
    if (first === null || first.done === true) return { ...base, matches: false }
    return { ...base, matches: true, firstScope: String((first.value as { scope?: unknown }).scope) }
  } catch {
    return { ...base, matches: false }
  } finally {
    clearTimeout(timer)
    void items.return?.(undefined)?.catch(() => {})
  }
}

async function probe (req: Extract<WorkerRequest, { mode: 'probe' }>): Promise<void> {
  const { connectors } = await loadConnectors(req.dirs)
  const source = await openExport(req.source)
  try {
    const results: Suggestion[] = []
    for (const c of connectors) results.push(await probeOne(c, source))
    await send({ type: 'suggestions', entries: source.entries().length, connectors: results })
  } finally {
    await source.close()
  }
}

async function runOne (req: Extract<WorkerRequest, { mode: 'import' }>): Promise<void> {
  const connector = findConnector(await loadConnectors(req.dirs), req.connectorId)
  if (connector === undefined) { await send({ type: 'error', code: 'NOT_FOUND', message: `no connector ${JSON.stringify(req.connectorId)}` }); return }
  // progress goes up in batches, at most ten a second: an export of 100k items must not flood IPC
  let batch: ImportProgress[] = []
  const flush = (): void => { if (batch.length > 0) { process.send!({ type: 'progress', events: batch }); batch = [] } }
  const timer = setInterval(flush, 100)
  try {
    const summary = await runImport({
      connector,
      source: req.source,
      submit: daemonSubmit({ socketPath: req.socketPath }),
      include: req.include ?? [],
      onProgress: (e) => { batch.push(e.type === 'item' ? { type: 'item', scope: e.scope, status: e.status, done: e.done } : e) }
    })
    clearInterval(timer)
    flush()
    await send({ type: 'summary', summary })
  } finally {
    clearInterval(timer)
  }
}

async function main (): Promise<void> {
  const req = JSON.parse(process.argv[2] ?? '{}') as WorkerRequest
  try {
    if (req.mode === 'probe') await probe(req)
    else await runOne(req)
  } catch (err) {
    await send({ type: 'error', code: isHearthError(err) ? err.code : 'INTERNAL', message: (err as Error)?.message ?? String(err) })
  }
  process.disconnect?.()
}

void main()
