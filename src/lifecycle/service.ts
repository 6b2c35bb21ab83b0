// The one shape of a long-lived part of the daemon (storage, the chain registrar, ingest, sync,
// the upstream proxy, the API listeners, ...): built without side effects, then started and
// stopped by the composition root, in order and in reverse. `status()` is what the part reports
// under its name in `GET /v1/status`; parts with nothing to report there answer undefined.
import type { Logger } from '../log.js'
import { HearthError } from '../errors.js'

export interface Service {
  readonly name: string
  start (): Promise<void>
  /**
   * Idempotent, and also called after a failed start (so it copes with a start that got only
   * part of the way); after it resolves the part holds no timers, sockets or file handles.
   */
  stop (): Promise<void>
  status (): Promise<unknown>
}

/** The status of every started service that reports one, by service name, in start order. */
export type StatusReport = Record<string, unknown>

/**
 * Starts services one at a time and remembers them, so that a failed start (or the end of the
 * daemon) stops exactly what had started, newest first. A stop that fails is logged and the
 * rest still stop. `stopAll` may come while a service is starting (a daemon stopped during its
 * start): it waits for that start to finish, stops it too, and refuses any later `start`.
 */
export class ServiceStack {
  readonly #started: Service[] = []
  readonly #logger: Logger
  #starting: { name: string; settled: Promise<unknown> } | null = null
  #closed = false

  constructor (logger: Logger) {
    this.#logger = logger
  }

  /**
   * Start `service` and keep it for `stopAll`; resolves to the same object. A service whose
   * start fails is stopped at once (whatever it opened is closed) and the error rethrown; after
   * `stopAll` began, nothing starts (DAEMON_STOPPED).
   */
  async start<S extends Service> (service: S): Promise<S> {
    if (this.#closed) throw stopped(service.name)
    const run = this.#run(service)
    const starting = { name: service.name, settled: run.catch(() => {}) }
    this.#starting = starting
    try {
      return await run
    } finally {
      if (this.#starting === starting) this.#starting = null
    }
  }

  async #run<S extends Service> (service: S): Promise<S> {
    try {
      await service.start()
      if (this.#closed) throw stopped(service.name)
    } catch (err) {
      await this.#stop(service)
      throw err
    }
    this.#started.push(service)
    this.#logger.debug({ service: service.name }, 'service started')
    return service
  }

  /** The services started so far, in start order. */
  get services (): readonly Service[] {
    return [...this.#started]
  }

  /** What has started and what is starting now, for a status report during start-up. */
  progress (): { started: string[]; starting: string | null } {
    return { started: this.#started.map((s) => s.name), starting: this.#starting?.name ?? null }
  }

  async stopAll (): Promise<void> {
    this.#closed = true
    // a service starting now is stopped by its own start() once that settles
    await this.#starting?.settled
    while (this.#started.length > 0) await this.#stop(this.#started.pop()!)
  }

  async #stop (service: Service): Promise<void> {
    try {
      await service.stop()
    } catch (err) {
      this.#logger.error({ err, service: service.name }, 'service failed to stop')
    }
  }

  /** Each started service's status; a status that throws is reported as its error message. */
  async status (): Promise<StatusReport> {
    const report: StatusReport = {}
    for (const service of this.#started) {
      try {
        const status = await service.status()
        if (status !== undefined) report[service.name] = status
      } catch (err) {
        report[service.name] = { error: (err as Error).message }
      }
    }
    return report
  }
}

/**
 * A service made of plain functions, for the composition root's small parts (a lock, a
 * listener) that are not worth a module of their own.
 */
export function service (name: string, parts: { start?: () => Promise<void>; stop?: () => Promise<void>; status?: () => Promise<unknown> }): Service {
  return {
    name,
    async start () { await parts.start?.() },
    async stop () { await parts.stop?.() },
    async status () { return await parts.status?.() }
  }
}

function stopped (name: string): HearthError {
  return new HearthError('DAEMON_STOPPED', `${name} was not started: the daemon is stopping`)
}

/**
 * Work a part does in the background from its start (an initial scan, a catch-up) but that need
 * not run before the daemon is up: with a gate, it begins once the gate resolves (the daemon
 * resolves it when every part has started, so a large home's scan does not slow the others'
 * starts), unless `stopped()` says the part was stopped meanwhile; a gate that never resolves (a
 * start that failed) never begins it. Without a gate it begins at once.
 */
export function beginBackground (gate: Promise<void> | undefined, stopped: () => boolean, begin: () => void): void {
  if (gate === undefined) begin()
  else void gate.then(() => { if (!stopped()) begin() })
}

/** What a service made on start (a handle, a client), or an INTERNAL error before it started. */
export function startedValue<T> (value: T | null, service: string): T {
  if (value === null) throw new HearthError('INTERNAL', `${service} is used before it started`)
  return value
}
