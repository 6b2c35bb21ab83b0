// Lost ciphertext is noticed (README, "Damage"): a pass over every stored file's CID checks that
// its blocks still exist (block-presence.ts: existence, not content), at start in the background
// and again every few hours. What it finds is storage's status (`damaged (N missing)`) in
// `/v1/status`, `/health` and the dashboard, and a warning naming `hearth doctor`, which brings
// the files back.
import type { Logger } from '../log.js'
import { beginBackground, type Service } from '../lifecycle/service.js'

export interface StoredRef { path: string; cid: string }

export interface PresenceReport {
  /** `checking` until the first pass ends. */
  state: 'checking' | 'ok' | 'damaged'
  checked: number
  missing: number
  /** The first missing files (at most MAX_EXAMPLES). */
  examples: StoredRef[]
  lastPassAt: string | null
  repair?: string
}

export interface PresenceCheckDeps {
  /**
   * One page of the index after `after` (by path, at most `limit` records): its stored files, and
   * the last path it covered (null once there is nothing more).
   */
  page (after: string | undefined, limit: number): Promise<{ refs: StoredRef[]; last: string | null }>
  /** Whether every block of `cid` exists here. */
  present (cid: string): Promise<boolean>
  /** Told of every pass's result (storage shows it in its status). */
  onReport?: (report: PresenceReport) => void
  logger: Logger
  /** Between passes (default 6 h). */
  everyMs?: number
  /** The first pass begins once this resolves (beginBackground); at start without it. */
  backgroundAfter?: Promise<void>
}

export interface PresenceCheck extends Service {
  /** One whole pass now (or the one running). */
  pass (): Promise<PresenceReport>
  report (): PresenceReport
}

const PAGE = 500
const MAX_EXAMPLES = 20
const REPAIR = 'run `hearth doctor` (daemon stopped): it stores them again from data/, or fetches them from the gateways in restore.gateways'

export function createPresenceCheck (deps: PresenceCheckDeps): PresenceCheck {
  let report: PresenceReport = { state: 'checking', checked: 0, missing: 0, examples: [], lastPassAt: null }
  let running: Promise<PresenceReport> | null = null
  let timer: NodeJS.Timeout | null = null
  let stopped = false

  async function runPass (): Promise<PresenceReport> {
    let checked = 0
    const missing: StoredRef[] = []
    let count = 0
    for (let after: string | undefined; !stopped;) {
      const { refs, last } = await deps.page(after, PAGE)
      for (const ref of refs) {
        if (stopped) break
        checked++
        if (await deps.present(ref.cid)) continue
        count++
        if (missing.length < MAX_EXAMPLES) missing.push(ref)
      }
      if (last === null) break
      after = last
    }
    const next: PresenceReport = { state: count > 0 ? 'damaged' : 'ok', checked, missing: count, examples: missing, lastPassAt: new Date().toISOString(), ...(count > 0 ? { repair: REPAIR } : {}) }
    if (stopped) return report
    report = next
    deps.onReport?.(next)
    if (count > 0) deps.logger.warn({ missing: count, checked, examples: missing.slice(0, 5).map((r) => r.path) }, `storage is damaged: ${count} stored ciphertexts are missing; ${REPAIR}`)
    return next
  }

  function pass (): Promise<PresenceReport> {
    running ??= runPass().finally(() => { running = null })
    return running
  }

  const background = (): void => {
    pass().catch((err: unknown) => { deps.logger.warn({ err }, 'the check of stored ciphertexts failed') })
  }

  return {
    name: 'storageCheck',
    async start () {
      stopped = false
      beginBackground(deps.backgroundAfter, () => stopped, () => {
        background()
        timer = setInterval(background, deps.everyMs ?? 6 * 3_600_000)
        timer.unref()
      })
    },
    async stop () {
      stopped = true
      if (timer !== null) clearInterval(timer)
      await running?.catch(() => {})
    },
    async status () { return report },
    pass,
    report: () => report
  }
}
