// The composition root, in two stages so the daemon answers `/health` before anything heavy loads.
// First the home (folders, lock) and the owner's listeners with the first route table (`/health`
// and `/v1/status` saying what is starting). Then, behind them, the parts (parts.ts, imported only
// now): identity, index, storage, search, chain, schemas, sync, proxy, imports, builders, ingest, and the
// full API. Every part is a service on one stack: started in order, stopped in reverse, also when
// a later one fails or the daemon is stopped while it starts. Nothing below this folder reaches
// for globals; this is the one place that knows them all.
import type { HomeLayout } from '../home.js'
import { asStorageFull } from '../errors.js'
import type { Logger } from '../log.js'
import type { HearthConfig } from '../config/types.js'
import type { ConfigSource, ConfigSources } from '../config/resolve.js'
import type { ScanProgress } from '../ingest/scanner.js'
import { ServiceStack } from '../lifecycle/service.js'
import { resolveLoopback } from '../api/loopback.js'
import { homeService } from './home-service.js'
import { ownerListeners } from './owner-listeners.js'

/** How long a request for a part that is not up yet waits before DAEMON_STARTING. */
export const STARTING_WAIT_MS = 30_000

export interface DaemonOptions {
  home: HomeLayout
  config: HearthConfig
  /** Where each configuration value came from (shown by GET /v1/config); defaults when absent. */
  configSources?: Record<string, ConfigSource>
  /** The environment variables and --set flags the configuration was resolved with. */
  configAmbient?: Omit<ConfigSources, 'file'>
  logger: Logger
  env?: NodeJS.ProcessEnv
  /** Progress and readiness lines for the person who started the daemon. */
  print?: (line: string) => void
  /** How long a request waits for a part that is still starting (default STARTING_WAIT_MS). */
  startingWaitMs?: number
}

export interface Daemon {
  ownerAddress: string
  socketPath: string | null
  tcpPort: number | null
  /** The builder listener's TCP port, when builders.listen is set. */
  buildersPort: number | null
  /** Resolves when the initial scan has reconciled the data folder with the index. */
  scanned: Promise<ScanProgress>
  stop (): Promise<void>
}

/** A daemon whose listeners answer while its parts start. */
export interface StartingDaemon {
  socketPath: string | null
  tcpPort: number | null
  /** Resolves once every part is up; rejects with what failed the start (everything is stopped by then). */
  ready: Promise<Daemon>
  /** Stops what has started, also in the middle of the start; nothing is left running after it. */
  stop (): Promise<void>
}

/** Starts the daemon and resolves as soon as `/health` answers; the parts start behind it. */
export async function launchDaemon (opts: DaemonOptions): Promise<StartingDaemon> {
  const { home, config, logger } = opts
  const startedAt = Date.now()
  const services = new ServiceStack(logger)
  let owner: string | null = null
  const listeners = ownerListeners({
    config,
    home,
    env: opts.env ?? process.env,
    starting: { startedAt, owner: () => owner, progress: () => services.progress() },
    waitMs: opts.startingWaitMs ?? STARTING_WAIT_MS,
    logger,
    print: opts.print ?? (() => {})
  })
  try {
    // judged by what it resolves to, before anything starts (a name for 0.0.0.0 is CONFIG_INVALID)
    if (config.api.tcp.enabled) await resolveLoopback(config.api.tcp.host, 'api.tcp.host')
    await services.start(homeService(home))
    await services.start(listeners)
  } catch (err) {
    await services.stopAll()
    // a full disk fails a start anywhere (lock, index, blocks): say so, not which write noticed
    throw asStorageFull(err, 'starting the daemon')
  }
  const ready = (async () => {
    const { startParts } = await import('./parts.js')
    return await startParts({ ...opts, startedAt, services, listeners, onOwner: (address) => { owner = address } })
  })().catch(async (err: unknown) => {
    const failure = asStorageFull(err, 'starting the daemon')
    listeners.failed(failure)
    await services.stopAll()
    throw failure
  })
  // a caller that only ever stops the daemon must not see an unhandled rejection
  ready.catch(() => {})
  return {
    socketPath: listeners.socketPath,
    tcpPort: listeners.tcpPort,
    ready,
    stop: async () => {
      await services.stopAll()
      await ready.catch(() => {})
    }
  }
}

/** Starts the daemon and resolves once every part is up (stopped again when one fails). */
export async function startDaemon (opts: DaemonOptions): Promise<Daemon> {
  const daemon = await launchDaemon(opts)
  return await daemon.ready
}
