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
 * Starts services in order (one at a time, or a few side by side) and remembers them, so that a
 * failed start (or the end of the daemon) stops exactly what had started, newest first. A stop
 * that fails is logged and the rest still stop. `stopAll` may come while services are starting (a
 * daemon stopped during its start): it waits for those starts to finish, stops them too, and
 * refuses any later `start`.
 */
export class ServiceStack {
  readonly #started: Service[] = []
  readonly #logger: Logger
  /** The starts in flight (one call of startTogether each); settled once its services are kept or stopped. */
  readonly #starting = new Set<{ names: string[]; settled: Promise<void> }>()
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
    const [started] = await this.startTogether(service)
    return started
  }

  /**
   * Start services that need nothing of each other side by side (stores opening their files on
   * libuv's threads while the main thread loads another's code) and keep them, in the order given,
   * as if started one after another: stopped in reverse. When one fails, the others still finish
   * starting, then all that started are stopped and the first failure is thrown.
   */
  async startTogether<S extends Service[]> (...services: S): Promise<S> {
    for (const service of services) if (this.#closed) throw stopped(service.name)
    let settle = (): void => {}
    const entry = { names: services.map((s) => s.name), settled: new Promise<void>((resolve) => { settle = resolve }) }
    this.#starting.add(entry)
    try {
      const outcomes = await Promise.allSettled(services.map(async (service) => { await this.#run(service) }))
      const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
      // decided and kept in one synchronous step: a stopAll that began meanwhile waits for `settled`
      if (failure === undefined && !this.#closed) {
        this.#started.push(...services)
        for (const service of services) this.#logger.debug({ service: service.name }, 'service started')
        return services
      }
      const up = services.filter((_, i) => outcomes[i]!.status === 'fulfilled')
      for (const service of up.reverse()) await this.#stop(service)
      throw failure !== undefined ? failure.reason : stopped(services[0]!.name)
    } finally {
      this.#starting.delete(entry)
      settle()
    }
  }

  /** Starts one service; one that fails, or finishes after stopAll began, is stopped again. */
  async #run (service: Service): Promise<void> {
    try {
      await service.start()
      if (this.#closed) throw stopped(service.name)
    } catch (err) {
      await this.#stop(service)
      throw err
    }
  }

  /** The services started so far, in start order. */
  get services (): readonly Service[] {
    return [...this.#started]
  }

  /** What has started and what is starting now (names joined by ", " when several start side by side), for a status report during start-up. */
  progress (): { started: string[]; starting: string | null } {
    const starting = [...this.#starting].flatMap((e) => e.names)
    return { started: this.#started.map((s) => s.name), starting: starting.length > 0 ? starting.join(', ') : null }
  }

  async stopAll (): Promise<void> {
    this.#closed = true
    // services starting now are stopped by their own start once it settles
    await Promise.all([...this.#starting].map(async (e) => { await e.settled }))
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
