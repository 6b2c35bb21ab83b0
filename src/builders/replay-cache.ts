// Signed requests already served, refused for as long as they could still be accepted
// (docs/protocol.md §3.8). Keyed by what was signed and who signed it (web3-signed.ts replayKey),
// never by the signature's text, which has several encodings. Checked in memory (synchronously, so two concurrent requests with one signature cannot
// both pass), persisted with the request's access-log entry so a restart inside the window does
// not reopen it; expired entries are dropped from both.
import type { BatchOp, HearthDatabase, Sublevel } from '../db/database.js'
import { joinKey, lastPart, padNumber } from '../db/keys.js'

export interface ReplayCache {
  /** Loads the still-valid signatures persisted by earlier runs. */
  load (): Promise<void>
  /** False when the request `key` was seen; otherwise marks it used (until `expiresAtMs`). */
  claim (key: string, expiresAtMs: number): boolean
  /** The write that persists a claim, for the caller's batch. */
  persistOp (key: string, expiresAtMs: number): BatchOp
  /** Drops expired entries (memory and disk). */
  prune (nowMs?: number): Promise<void>
  readonly size: number
}

export function openReplayCache (db: HearthDatabase): ReplayCache {
  const sub: Sublevel<string> = db.sublevel(['builders', 'replay'], { valueEncoding: 'utf8' })
  const seen = new Map<string, number>()
  return {
    async load () {
      const now = Date.now()
      for await (const key of sub.keys({ gte: padNumber(now) })) {
        const sep = key.indexOf('\u0000')
        seen.set(lastPart(key), Number(key.slice(0, sep)))
      }
    },
    claim (key, expiresAtMs) {
      const until = seen.get(key)
      if (until !== undefined && until >= Date.now()) return false
      seen.set(key, expiresAtMs)
      return true
    },
    persistOp (key, expiresAtMs) {
      return { type: 'put', sublevel: sub, key: joinKey(padNumber(expiresAtMs), key), value: '' }
    },
    async prune (nowMs = Date.now()) {
      for (const [sig, until] of seen) if (until < nowMs) seen.delete(sig)
      await sub.clear({ lt: padNumber(nowMs) })
    },
    get size () { return seen.size }
  }
}
