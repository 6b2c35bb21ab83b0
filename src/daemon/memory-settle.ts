// Returns the start-up's garbage (and a burst's) to the system once the daemon is idle, instead of
// whenever V8's memory reducer decides to. Starting loads ~800 modules and allocates enough that
// V8's young generation grows to its maximum (2 × 8 MB with the launcher's
// --max-semi-space-size=8) and the old generation keeps the pages that start-up garbage freed;
// an idle daemon allocates almost nothing, so no collection comes to shrink them, and the memory
// reducer's own check (a timer after a full GC, then "is the allocation rate low?") passes in some
// runs and not in others: 101–106 MB right after a start and 81–84 MB 30 s later in one run, 103
// both in the next. V8 shrinks the young generation after a full collection when the allocation
// rate it measured over the last ~5 s is low, so one full collection after QUIET_AFTER_START_MS
// without work does what the memory reducer would (README, "Idle memory"). After a later busy
// period that grew the heap it runs again once the daemon has been quiet for QUIET_AFTER_WORK_MS,
// so a busy user's requests do not pay a collection between their bursts, and an idle daemon's
// routine work (a sync round) none at all.
// The collection is V8's own full GC (`gc`, exposed to a context of its own at the first settle:
// the daemon's global scope does not get it). It costs the main thread one pause (20–40 ms on this
// machine's idle daemon) while nothing else runs.
import { setFlagsFromString, getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import type { Logger } from '../log.js'
import { service, type Service } from '../lifecycle/service.js'

/** Quiet this long after the start: V8's allocation-rate window (~5 s) then sees only the idle daemon. */
const QUIET_AFTER_START_MS = 6_000
/** Quiet this long after later work before collecting again. */
const QUIET_AFTER_WORK_MS = 30_000
/** How often the event loop's utilisation is looked at. */
const CHECK_MS = 3_000
/** A check window with the event loop busier than this is work (an idle daemon's timers stay far below). */
const BUSY_UTILISATION = 0.02
/** After later work, collect only when the heap has grown this much since the last collection. */
const GROWTH_BYTES = 4 * 1048576

export interface MemorySettleOptions {
  logger: Logger
  quietAfterStartMs?: number
  quietAfterWorkMs?: number
  checkMs?: number
}

export interface MemorySettleStatus {
  /** Full collections run so far because the daemon had become idle. */
  settles: number
  /** How long the last one held the main thread (ms). */
  lastPauseMs: number | null
}

export interface MemorySettleService extends Service {
  status (): Promise<MemorySettleStatus>
}

export function memorySettleService (opts: MemorySettleOptions): MemorySettleService {
  const checkMs = opts.checkMs ?? CHECK_MS
  let timer: NodeJS.Timeout | null = null
  let last: EventLoopUtilization | null = null
  let quietMs = 0
  let needQuietMs = opts.quietAfterStartMs ?? QUIET_AFTER_START_MS
  let dirty = true // the start itself is work
  let settles = 0
  let lastPauseMs: number | null = null
  let collect: (() => void) | null = null
  let retried = false
  let heapAfterSettle = 0

  function check (): void {
    const now = performance.eventLoopUtilization()
    const window = last === null ? now : performance.eventLoopUtilization(now, last)
    last = now
    if (window.utilization > BUSY_UTILISATION) {
      if (!dirty) needQuietMs = opts.quietAfterWorkMs ?? QUIET_AFTER_WORK_MS
      dirty = true
      retried = false
      quietMs = 0
      return
    }
    quietMs += checkMs
    if (!dirty || quietMs < needQuietMs) return
    if (settles > 0 && !retried && getHeapStatistics().total_heap_size < heapAfterSettle + GROWTH_BYTES) {
      dirty = false // the work left nothing worth a collection
      return
    }
    settle()
  }

  function settle (): void {
    const youngBefore = youngGenerationBytes()
    const started = performance.now()
    try {
      collect ??= exposedGc()
      collect()
    } catch (err) {
      opts.logger.warn({ err }, 'could not return idle memory')
      stop()
      return
    }
    settles++
    lastPauseMs = Math.round(performance.now() - started)
    // the collection's own utilisation is not work
    last = performance.eventLoopUtilization()
    quietMs = 0
    // V8 kept the young generation when the allocations since its previous collection (the last
    // of the start, or of the burst) still weighed in its window: this collection is a new starting
    // point, so the next quiet period's one shrinks it
    const shrunk = youngGenerationBytes() < youngBefore || youngBefore <= MIN_YOUNG_BYTES
    dirty = !shrunk && !retried
    retried = dirty
    heapAfterSettle = getHeapStatistics().total_heap_size
    opts.logger.debug({ youngGenerationMb: youngGenerationBytes() / 1048576, pauseMs: lastPauseMs }, 'idle: full collection to return memory')
  }

  function stop (): void {
    if (timer !== null) clearInterval(timer)
    timer = null
  }

  return {
    ...service('memorySettle', {
      async start () {
        last = performance.eventLoopUtilization()
        timer = setInterval(check, checkMs)
        timer.unref()
      },
      async stop () { stop() }
    }),
    status: async () => ({ settles, lastPauseMs })
  }
}

/** The young generation's smallest size (two 1 MB semi-spaces): nothing left to shrink. */
const MIN_YOUNG_BYTES = 2 * 1048576

function youngGenerationBytes (): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0
}

/** V8's `gc` in a context of its own (exposing it to the daemon's global scope is not needed). */
function exposedGc (): () => void {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as unknown
  if (typeof gc !== 'function') throw new Error('V8 did not expose gc')
  return gc as () => void
}
