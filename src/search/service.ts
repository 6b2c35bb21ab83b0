// The search part of the daemon: opens the index in the home (a damaged or foreign file is
// deleted and built again, never a failed start), follows the file index in the background, and
// answers queries from what is indexed so far (`complete: false, pending: N` while catching up).
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { EventSource } from '../lifecycle/event-hub.js'
import type { HearthEvents } from '../lifecycle/events.js'
import { beginBackground, type Service } from '../lifecycle/service.js'
import { checkQuery, makeCursor } from './query.js'
import { Indexer, type IndexerDeps } from './indexer.js'
import { createHandedVersions } from './handed.js'
import { findHits } from './find.js'
import { SearchStore, removeSearchFiles } from './store.js'
import type { Search, SearchAnswer, SearchHit, SearchQuery } from './types.js'

export interface SearchDeps extends IndexerDeps {
  /** The index's folder in the home (home.search). */
  dir: string
  events: EventSource<HearthEvents>
  /** How often the change log is looked at besides the events (a file deleted from data/ has none). */
  pollMs?: number
  /** Changes are followed at most once per this many ms while they keep coming (default FOLLOW_MS). */
  followMs?: number
  /**
   * A digest of what the installed connectors declare searchable: an index built under other
   * declarations (a connector added, updated or removed) is built again, so no version keeps
   * fields that are no longer declared or misses ones that now are.
   */
  declarations?: string
  /** The catch-up with the change log (and the polling for changes) begins once this resolves (beginBackground); at start without it. */
  backgroundAfter?: Promise<void>
}

export interface SearchService extends Service, Search {
  /** Resolves once every change known now is indexed (tests, doctor). */
  settled (): Promise<void>
}

const DEFAULT_POLL_MS = 500
/**
 * A burst of stored files is followed in steps at most this far apart, not one step per file: a
 * step reads the change log, the scope's latest version back from disk and rewrites its rows, so
 * following every POST of a burst cost a quarter of a lone client's main-thread CPU per POST
 * (bench/api.ts). The first change after a quiet spell is followed at once.
 */
const FOLLOW_MS = 100
/** Wait after a failed step (storage down) before the next try. */
const RETRY_MS = 5000

/** Whether an error means the index file is damaged or not this home's (delete and build again). */
export function isDamage (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && (/^SQLITE_(CORRUPT|NOTADB|CANTOPEN|IOERR)/.test(code) || code === 'HEARTH_INDEX_REPLACED')
}

/** Opens the index, deleting a damaged one first; `rebuilt` says whether it was. */
export function openSearchStore (dir: string, logger: Logger): { store: SearchStore; rebuilt: boolean } {
  try {
    return { store: new SearchStore(dir), rebuilt: false }
  } catch (err) {
    if (!isDamage(err)) throw err
    logger.warn({ err: (err as Error).message, dir }, 'search index damaged: it is built again from the stored versions')
    removeSearchFiles(dir)
    return { store: new SearchStore(dir), rebuilt: true }
  }
}

export function createSearchService (deps: SearchDeps): SearchService {
  let store: SearchStore | null = null
  let indexer: Indexer | null = null
  let running: Promise<void> | null = null
  let again = false
  let stopped = true
  let timer: NodeJS.Timeout | null = null
  let retryAt = 0
  /** When the last run started, and the run asked for by a change that came sooner than followMs after it. */
  let lastRunAt = 0
  /** The gate (backgroundAfter) is open: changes are followed as they are announced. */
  let following = false
  let follow: NodeJS.Timeout | null = null
  const followMs = deps.followMs ?? FOLLOW_MS
  const unsubscribe: Array<() => void> = []
  const waiters: Array<() => void> = []
  const handed = createHandedVersions(deps.specFor)

  const open = (): void => {
    let opened = openSearchStore(deps.dir, deps.logger).store
    const built = opened.declarations()
    if (deps.declarations !== undefined && built !== deps.declarations) {
      if (built !== null) {
        deps.logger.info({ dir: deps.dir }, 'search: what the connectors declare searchable changed: the index is built again')
        opened.close()
        removeSearchFiles(deps.dir)
        opened = new SearchStore(deps.dir)
      }
      opened.setDeclarations(deps.declarations)
    }
    store = opened
    indexer = new Indexer(opened, deps, handed)
  }

  const run = async (): Promise<void> => {
    try {
      // up to the head as it is now, a page per step: changes made meanwhile wait for the next run
      // (followMs after this one began), or a lone client's POSTs, each landing during the step
      // before, kept the indexer stepping once per file
      const head = await deps.changes.currentSeq()
      while (!stopped && indexer !== null && await indexer.step() && store !== null && store.cursor() < head) { /* one bounded page per turn */ }
      if (!stopped && indexer !== null && await indexer.pending() === 0) for (const w of waiters.splice(0)) w()
    } catch (err) {
      if (isDamage(err)) { reset(err); return }
      retryAt = Date.now() + RETRY_MS
      deps.logger.warn({ err: (err as Error).message }, 'search: indexing paused, tried again shortly')
    }
  }

  const wake = (): void => {
    if (stopped || Date.now() < retryAt) return
    if (running !== null) { again = true; return }
    lastRunAt = Date.now()
    running = run().finally(() => {
      running = null
      if (again) { again = false; wake() }
    })
  }

  /** A file indexed or a scope deleted: followed now, or followMs after the last run began. */
  const changed = (): void => {
    // before the gate opens, the catch-up it begins picks these changes up as well
    if (stopped || !following || follow !== null) return
    const wait = lastRunAt + followMs - Date.now()
    if (wait <= 0 && running === null) { wake(); return }
    follow = setTimeout(() => { follow = null; wake() }, Math.max(0, wait))
    follow.unref()
  }

  /** A damaged file met while running: closed, deleted and built again from the change log's start. */
  const reset = (err: unknown): void => {
    deps.logger.warn({ err: (err as Error).message }, 'search index damaged while running: it is built again')
    store?.close()
    removeSearchFiles(deps.dir)
    open()
    again = true
  }

  return {
    name: 'search',
    async start () {
      open()
      stopped = false
      unsubscribe.push(
        deps.events.on('version.data', ({ record, data }) => { handed.offer(record, data) }),
        deps.events.on('file.indexed', changed),
        deps.events.on('scope.deleted', changed)
      )
      // the catch-up and what would start it (the polling, a change announced), all behind the gate
      beginBackground(deps.backgroundAfter, () => stopped, () => {
        following = true
        timer = setInterval(() => {
          if (running === null) void deps.changes.currentSeq().then((seq) => { if (store !== null && seq > store.cursor()) wake() })
        }, deps.pollMs ?? DEFAULT_POLL_MS)
        timer.unref()
        wake()
      })
    },
    async stop () {
      stopped = true
      following = false
      if (timer !== null) clearInterval(timer)
      if (follow !== null) clearTimeout(follow)
      timer = null
      follow = null
      for (const off of unsubscribe.splice(0)) off()
      await running
      store?.close()
      store = null
      indexer = null
      handed.clear()
      for (const w of waiters.splice(0)) w()
    },
    async status () {
      if (store === null || indexer === null) return { state: 'stopped' }
      return { ...store.counts(), pending: await indexer.pending() }
    },
    async settled () {
      if (stopped || indexer === null) return
      await new Promise<void>((resolve) => { waiters.push(resolve); wake(); again = true })
    },
    async search (query: SearchQuery): Promise<SearchAnswer> {
      const started = performance.now()
      const checked = checkQuery(query)
      if (store === null || indexer === null) throw new HearthError('DAEMON_STARTING', 'search is not running yet')
      let hits: SearchHit[]
      let capped = false
      try {
        ({ hits, capped } = findHits(store, checked, checked.limit + 1))
      } catch (err) {
        if (!isDamage(err)) throw err
        reset(err)
        wake()
        hits = []
      }
      const more = hits.length > checked.limit
      const pending = await indexer.pending()
      return {
        hits: hits.slice(0, checked.limit),
        next: more ? makeCursor(checked, checked.offset + checked.limit) : null,
        complete: pending === 0,
        pending,
        capped,
        tookMs: Math.round((performance.now() - started) * 10) / 10
      }
    }
  }
}
