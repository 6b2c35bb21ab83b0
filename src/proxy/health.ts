// Whether the upstream answered lately (for `hearth status`, and to drain queued work the moment
// it is back).
import type { UpstreamHealth } from './types.js'

export interface HealthTracker {
  ok (): void
  failed (err: unknown): void
  snapshot (): UpstreamHealth
}

export function createHealthTracker (deps: { onBack?: () => void } = {}): HealthTracker {
  const state: UpstreamHealth = { reachable: null, lastOkAt: null, lastFailureAt: null, lastError: null }
  return {
    ok () {
      state.reachable = true
      state.lastOkAt = Date.now()
      deps.onBack?.()
    },
    failed (err) {
      state.reachable = false
      state.lastFailureAt = Date.now()
      state.lastError = err instanceof Error ? err.message : String(err)
    },
    snapshot: () => ({ ...state })
  }
}
