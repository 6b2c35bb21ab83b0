// Restore through the chain as a running part: one round at a time (a background pickup and a
// `hearth restore` share it), a pickup timer so files another device registered arrive even with
// no peer online, and the last round's progress for status.
import { HearthError } from '../errors.js'
import type { Logger } from '../log.js'
import { restoreFromChain, type ChainRestoreDeps, type RestoreChain, type RestoreProgress, type RestoreResult } from './chain-restore.js'

export interface RestoreDeps extends Omit<ChainRestoreDeps, 'chain'> {
  /** Null when no chain is configured: restore then answers CONFIG_INVALID and nothing runs. */
  chain: RestoreChain | null
  /** Background pickup period (at least 10 s). */
  pickupIntervalMs: number
  logger: Logger
}

export interface ChainRestorer {
  /** Run a round, or join the one running (`onProgress` then follows only a round it started). */
  restore (onProgress?: (p: RestoreProgress) => void): Promise<RestoreResult>
  /** The last round's progress with its time, or null before the first. */
  last (): (RestoreProgress & { at: string }) | null
  startPickup (): void
  /** Stop the pickup and wait for a running round. */
  stop (): Promise<void>
}

export const MIN_PICKUP_INTERVAL_MS = 10_000

export function createChainRestorer (deps: RestoreDeps): ChainRestorer {
  const { logger } = deps
  let restoring: Promise<RestoreResult> | null = null
  let lastRound: (RestoreProgress & { at: string }) | null = null
  let pickupTimer: NodeJS.Timeout | null = null

  const restore = async (onProgress?: (p: RestoreProgress) => void): Promise<RestoreResult> => {
    if (deps.chain === null) throw new HearthError('CONFIG_INVALID', 'restore needs a chain: set chain.preset (and its settings)')
    restoring ??= restoreFromChain({ ...deps, chain: deps.chain }, {
      onProgress: (p) => {
        lastRound = { ...p, at: new Date().toISOString() }
        onProgress?.(p)
        if (p.done) logger[p.written > 0 || p.failed > 0 ? 'info' : 'debug']({ restore: p }, 'chain restore round finished')
      }
    }).finally(() => { restoring = null })
    return await restoring
  }

  return {
    restore,
    last: () => lastRound,
    startPickup () {
      if (deps.chain === null || pickupTimer !== null) return
      pickupTimer = setInterval(() => {
        restore().catch((err: unknown) => logger.debug({ err: (err as Error).message }, 'background chain pickup failed'))
      }, Math.max(MIN_PICKUP_INTERVAL_MS, deps.pickupIntervalMs))
      pickupTimer.unref()
    },
    async stop () {
      if (pickupTimer !== null) clearInterval(pickupTimer)
      pickupTimer = null
      await restoring?.catch(() => {})
    }
  }
}
