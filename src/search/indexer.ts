// Follows the file index's change log into the search index. The change log names every path
// whose record changed (a new version, a state change, an edit in place, a deletion, each
// version of a deleted scope) once, at its last change, so one cursor (the last seq followed,
// kept in the search index itself) is both the catch-up at start and the live updates: events
// only say "look now". A page of changes is applied, then the cursor moves past it; a version
// already indexed with the same bytes (sha256) is not read again, so a page applied twice after
// a crash costs little, and one whose data ingest handed over as it stored it is not read back
// (handed.ts). Work is done in bounded steps that give the event loop back between them.
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { isHearthError } from '../errors.js'
import type { ChangeEntry } from '../db/file-index.js'
import type { FileRecord, FileState } from '../db/types.js'
import type { Logger } from '../log.js'
import { extractRows, instantMs, type Extracted, type SearchSpec, type TextRow } from './extract.js'
import type { HandedVersions } from './handed.js'
import type { SearchStore } from './store.js'

/** What the indexer reads from the file index (FileIndex has these). */
export interface ChangeFeed {
  changesSince (since: number, limit?: number): Promise<ChangeEntry[]>
  currentSeq (): Promise<number>
  latest (scope: string, filter?: { states?: readonly FileState[] }): Promise<FileRecord | null>
}

export interface IndexerDeps {
  changes: ChangeFeed
  /** The plaintext `data` of a stored version (its envelope's data). */
  readData: (record: FileRecord) => Promise<unknown>
  /** What the scope declares searchable (connector metadata); {} for every string field of every version. */
  specFor: (scope: string) => SearchSpec
  logger: Logger
}

/** The states in which a version can be read back (what GET /v1/data serves). */
export const READABLE_STATES: readonly FileState[] = ['stored', 'registered']
/** Changes read per step. */
const PAGE = 100
/** Unreadable versions named in a page's log line (the rest are counted). */
const UNREADABLE_SHOWN = 3
/** Rows written per transaction before the event loop gets a turn. */
const ROW_CHUNK = 2000

/**
 * Whether a version is in the answers at all: readable, with a time, and not the archived copy
 * (`path#cid`) of a file that was edited in place, which the edit replaced.
 */
export function isSearchable (record: FileRecord): boolean {
  return READABLE_STATES.includes(record.state) && record.collectedAt !== null && !record.path.includes('#')
}

/** The file index is not the one this search index followed (recreated): build it again. */
export class IndexReplaced extends Error {
  readonly code = 'HEARTH_INDEX_REPLACED'
}

export class Indexer {
  readonly #store: SearchStore
  readonly #deps: IndexerDeps
  readonly #handed: Pick<HandedVersions, 'take' | 'passed'> | null
  /** The page's versions that could not be read back: said in one log line per page, not one each. */
  #unreadable: Array<{ path: string; err: string }> = []

  /** `handed`: versions whose rows ingest's data gave already (the others are read back). */
  constructor (store: SearchStore, deps: IndexerDeps, handed: Pick<HandedVersions, 'take' | 'passed'> | null = null) {
    this.#store = store
    this.#deps = deps
    this.#handed = handed
  }

  /** Changes of the file index not followed yet (an upper bound of the versions to index). */
  async pending (): Promise<number> {
    return Math.max(0, await this.#deps.changes.currentSeq() - this.#store.cursor())
  }

  /** Applies one page of changes; false when there was none (caught up). */
  async step (): Promise<boolean> {
    // the head first: a change the page does not hold is then newer than it (a reverted write
    // takes its log entry back, so the log can end before the head)
    const head = await this.#deps.changes.currentSeq()
    if (head < this.#store.cursor()) throw new IndexReplaced(`the search index followed the file index up to change ${this.#store.cursor()}, but it has only ${head} (a new file index)`)
    const page = await this.#deps.changes.changesSince(this.#store.cursor(), PAGE)
    if (page.length === 0) {
      if (head > this.#store.cursor()) this.#store.setCursor(head)
      return false
    }
    // one transaction for the page: FTS5 writes a segment per transaction, so per-version
    // commits cost several times the indexing itself (a crash takes the page back, and the
    // cursor with it: it is indexed again)
    this.#store.begin()
    try {
      const latestOnly = new Set<string>()
      for (const entry of page) {
        const scope = entry.deleted ? entry.scope : entry.record.scope
        if (this.#deps.specFor(scope).versions === 'latest') { latestOnly.add(scope); if (entry.deleted) await this.#remove(entry.path); continue }
        if (entry.deleted || !isSearchable(entry.record)) await this.#remove(entry.path)
        else {
          await this.#index(entry.record)
          // a version handed over is indexed without a wait of its own: the event loop gets a turn
          // after each, or a page of them held it ~30–50 ms while a folder of files was being stored
          await yieldToLoop()
        }
      }
      for (const scope of latestOnly) await this.#keepLatest(scope)
      this.#store.setCursor(page[page.length - 1]!.seq)
      this.#store.commit()
    } catch (err) {
      this.#store.rollback()
      this.#unreadable.length = 0 // the page is applied again, and says them then
      throw err
    }
    // after the commit: a page taken back is applied again, and may still take what was handed
    for (const entry of page) this.#handed?.passed(entry.path, entry.deleted ? null : entry.record.sha256)
    this.#sayUnreadable()
    return true
  }

  /** A scope searched by its latest version only: that version in, every other out. */
  async #keepLatest (scope: string): Promise<void> {
    const latest = await this.#deps.changes.latest(scope, { states: READABLE_STATES })
    const keep = latest !== null && isSearchable(latest) ? latest : null
    for (const path of this.#store.scopeVersions(scope)) if (path !== keep?.path) await this.#remove(path)
    if (keep !== null) await this.#index(keep)
  }

  async #remove (path: string): Promise<void> {
    while (!this.#store.removeVersionChunk(path)) await yieldToLoop()
  }

  async #index (record: FileRecord): Promise<void> {
    if (this.#store.version(record.path)?.sha256 === record.sha256) return
    const extracted = this.#handed?.take(record) ?? await this.#readRows(record)
    if (extracted === null) return
    const { rows, truncated } = extracted
    if (truncated) this.#deps.logger.warn({ path: record.path, rows: rows.length }, 'search: version indexed in part (it exceeds the indexing limits)')
    await this.#remove(record.path)
    const id = this.#store.beginVersion({ path: record.path, scope: record.scope, collectedAt: record.collectedAt!, sha256: '' })
    const versionMs = instantMs(record.collectedAt!)
    const timeOf = (row: TextRow): number | null => (row.at !== null ? instantMs(row.at) : null) ?? versionMs
    for (let i = 0; i < rows.length; i += ROW_CHUNK) {
      this.#store.addRows(id, rows.slice(i, i + ROW_CHUNK), timeOf)
      if (i + ROW_CHUNK < rows.length) await yieldToLoop()
    }
    this.#store.finishVersion(id, record.sha256, null)
  }

  /**
   * One line for the page's unreadable versions, with their count and the first few: a home of
   * many (a restore in progress, a damaged store) logged a line per version, 10,000 at one start.
   */
  #sayUnreadable (): void {
    const unreadable = this.#unreadable.splice(0)
    if (unreadable.length === 0) return
    this.#deps.logger.warn({ versions: unreadable.length, first: unreadable.slice(0, UNREADABLE_SHOWN) }, `search: ${unreadable.length} version${unreadable.length === 1 ? '' : 's'} not indexed (cannot be read back)`)
  }

  /** A version's rows from its data read back; null (and out of the index) when it cannot be read. */
  async #readRows (record: FileRecord): Promise<Extracted | null> {
    let data: unknown
    try {
      data = await this.#deps.readData(record)
    } catch (err) {
      // storage that is down now may answer later: the page is tried again; anything else (a
      // version gone meanwhile, a damaged ciphertext) is one version not searchable, said in the log
      if (isHearthError(err, 'STORAGE_UNAVAILABLE')) throw err
      this.#unreadable.push({ path: record.path, err: (err as Error).message })
      await this.#remove(record.path)
      return null
    }
    return extractRows(data, this.#deps.specFor(record.scope))
  }
}
