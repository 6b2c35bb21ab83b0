// The access log (docs/protocol.md §3.8): every builder read and every denial, for the owner only.
// Entries are keyed by their logId — the time in ms and a sequence — so each day is one key
// range, a page is one range read from a time or cursor (never a pass over older days), and
// retention drops whole days. Two more namespaces index the entries by builder and by scope.
// Appends are serialised: each is one atomic batch together with the caller's own writes
// (the replay-cache entry, the grant's read counter), in the order they were made.
import type { BatchOp, HearthDatabase, Sublevel } from '../db/database.js'
import { joinKey, lastPart, rangeOf } from '../db/keys.js'
import type { AccessLogEntry } from './types.js'

export type NewAccessLogEntry = Omit<AccessLogEntry, 'logId' | 'at'>

export interface AccessLogQuery {
  builder?: string
  scope?: string
  /** ISO instant or ms: entries at or after it. */
  since?: number
  /** Entries strictly before it (ms). */
  until?: number
  /** The logId the previous page ended with. */
  cursor?: string
  order?: 'asc' | 'desc'
  limit?: number
}

export interface AccessLog {
  append (entry: NewAccessLogEntry, extraOps?: () => Promise<BatchOp[]>): Promise<AccessLogEntry>
  /** Writes an appended entry again with new `repeats` (its key and indexes stay). */
  setRepeats (entry: AccessLogEntry, repeats: number): Promise<void>
  query (q?: AccessLogQuery): Promise<{ entries: AccessLogEntry[]; next: string | null }>
  /** Drops every day before `beforeMs` (whole UTC days); returns how many entries went. */
  prune (beforeMs: number): Promise<number>
}

const MS_WIDTH = 13
const SEQ_WIDTH = 6

function logIdAt (ms: number, seq: number): string {
  return `${String(ms).padStart(MS_WIDTH, '0')}-${String(seq).padStart(SEQ_WIDTH, '0')}`
}

/** Key bound for a time: every logId of that ms or later sorts at or above it. */
function bound (ms: number): string {
  return String(Math.max(0, Math.floor(ms))).padStart(MS_WIDTH, '0')
}

export function openAccessLog (db: HearthDatabase): AccessLog {
  const entries: Sublevel<AccessLogEntry> = db.sublevel(['builders', 'log'])
  const byBuilder: Sublevel<string> = db.sublevel(['builders', 'log-by-builder'], { valueEncoding: 'utf8' })
  const byScope: Sublevel<string> = db.sublevel(['builders', 'log-by-scope'], { valueEncoding: 'utf8' })
  let lastMs = 0
  let seq = 0
  let tail: Promise<unknown> = Promise.resolve()

  function nextId (): { logId: string; ms: number } {
    const ms = Math.max(Date.now(), lastMs)
    seq = ms === lastMs ? seq + 1 : 0
    lastMs = ms
    return { logId: logIdAt(ms, seq), ms }
  }

  return {
    async append (input, extraOps) {
      const run = tail.then(async () => {
        const { logId, ms } = nextId()
        const entry: AccessLogEntry = { logId, at: new Date(ms).toISOString(), ...input }
        const ops: BatchOp[] = [{ type: 'put', sublevel: entries, key: logId, value: entry }]
        if (entry.builder !== null) ops.push({ type: 'put', sublevel: byBuilder, key: joinKey(entry.builder.toLowerCase(), logId), value: '' })
        if (entry.scope !== null) ops.push({ type: 'put', sublevel: byScope, key: joinKey(entry.scope, logId), value: '' })
        if (extraOps !== undefined) ops.push(...await extraOps())
        await db.batch(ops)
        return entry
      })
      tail = run.catch(() => undefined)
      return await run
    },

    async setRepeats (entry, repeats) {
      const run = tail.then(async () => { await entries.put(entry.logId, { ...entry, repeats }) })
      tail = run.catch(() => undefined)
      await run
    },

    async query (q = {}) {
      const limit = Math.max(1, Math.min(q.limit ?? 100, 1000))
      const desc = q.order === 'desc'
      // the range in logId space: [since, until) narrowed by the cursor
      let gte = q.since !== undefined ? bound(q.since) : undefined
      let lt = q.until !== undefined ? bound(q.until) : undefined
      let gt: string | undefined
      if (q.cursor !== undefined) {
        if (desc) lt = lt === undefined || q.cursor < lt ? q.cursor : lt
        else { gt = q.cursor; if (gte !== undefined && gte <= q.cursor) gte = undefined }
      }
      const range = { ...(gte !== undefined ? { gte } : {}), ...(gt !== undefined ? { gt } : {}), ...(lt !== undefined ? { lt } : {}) }
      const builder = q.builder?.toLowerCase()
      let found: AccessLogEntry[]
      if (builder !== undefined || q.scope !== undefined) {
        // the narrower index drives; the other filter is checked on the entries
        const [index, head] = builder !== undefined ? [byBuilder, builder] : [byScope, q.scope as string]
        const prefixed = Object.fromEntries(Object.entries(range).map(([k, v]) => [k, joinKey(head, v)]))
        const whole = rangeOf(head)
        if (prefixed.gte === undefined && prefixed.gt === undefined) prefixed.gt = whole.gt
        if (prefixed.lt === undefined) prefixed.lt = whole.lt
        found = []
        const batch = 256
        let after: Record<string, string> = prefixed
        for (;;) {
          const keys = await index.keys({ ...after, reverse: desc, limit: batch }).all()
          if (keys.length === 0) break
          const got = await entries.getMany(keys.map(lastPart))
          for (const e of got) {
            if (e !== undefined && (q.scope === undefined || e.scope === q.scope)) found.push(e)
            if (found.length > limit) break
          }
          if (found.length > limit || keys.length < batch) break
          const lastKey = keys[keys.length - 1] as string
          after = desc ? { ...prefixed, lt: lastKey } : { ...prefixed, gt: lastKey }
          delete after[desc ? 'lte' : 'gte']
        }
      } else {
        found = await entries.values({ ...range, reverse: desc, limit: limit + 1 }).all()
      }
      const page = found.slice(0, limit)
      return { entries: page, next: found.length > limit ? (page[page.length - 1] as AccessLogEntry).logId : null }
    },

    async prune (beforeMs) {
      const dayStart = Math.floor(beforeMs / 86_400_000) * 86_400_000
      const old = await entries.values({ lt: bound(dayStart) }).all()
      if (old.length === 0) return 0
      const ops: BatchOp[] = []
      for (const e of old) {
        ops.push({ type: 'del', sublevel: entries, key: e.logId })
        if (e.builder !== null) ops.push({ type: 'del', sublevel: byBuilder, key: joinKey(e.builder.toLowerCase(), e.logId) })
        if (e.scope !== null) ops.push({ type: 'del', sublevel: byScope, key: joinKey(e.scope, e.logId) })
      }
      await db.batch(ops)
      return old.length
    }
  }
}
