// Builds the configured storage backend for the daemon's composition root and for offline CLI
// commands (`hearth storage ...`). Building checks the configuration and touches nothing; the
// embedded node opens its folders on `start()` and the kubo client is ready at once. The
// embedded backend's folders come from the home layout; the kubo backend needs only its RPC
// address.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { HearthError } from '../errors.js'
import type { Service } from '../lifecycle/service.js'
import type { StorageBackend, StorageHealth, UnsyncedAdd } from './types.js'
import { withVerifiedReads } from './verified-reads.js'
import { joinPieces, type StreamPiece } from './stream-pieces.js'
import type { StagedStream } from './staged-import.js'
import { checkKuboOptions } from './kubo-options.js'
import type { SharedFileWriting } from './file-writer.js'
import type { PresenceReport } from './presence-check.js'

export type StorageBackendKind = StorageBackend['kind']

export interface KuboConnection {
  url: string
  headers?: Record<string, string>
  timeoutMs?: number
}

export interface StorageConfig {
  backend: StorageBackendKind
  kubo?: KuboConnection
}

/** A storage backend with the service shape; its status is the backend kind, its health and the last check for lost blocks. */
export interface StorageService extends StorageBackend, Service {
  status (): Promise<{ backend: StorageBackendKind; presence?: PresenceReport } & StorageHealth>
  /** Whether every block of the content exists here (the backend's `present`, else `has`). */
  present (cid: string): Promise<boolean>
  /** The last check for lost blocks (presence-check.ts), shown in the status. */
  notePresence (report: PresenceReport): void
  /** The missing files the last check found, or null (none, or not checked yet). */
  damage (): { missing: number; checked: number; repair: string } | null
}

/**
 * Check the configuration and build the (unstarted) backend; throws CONFIG_INVALID. `files`: the
 * daemon's one file-writer thread and `syncfs` helper for the embedded backend's block writes
 * (else it makes its own).
 */
export function createStorage (config: StorageConfig, paths: Pick<HomeLayout, 'blocks' | 'datastore'>, logger?: Logger, files?: SharedFileWriting): StorageService {
  switch (config.backend) {
    case 'embedded':
      // each backend's libraries load when that backend starts, never both
      return new StorageHolder('embedded', async () => {
        const { createEmbeddedStorage } = await import('./embedded.js')
        return withVerifiedReads(await createEmbeddedStorage({ blocksDir: paths.blocks, datastoreDir: paths.datastore, logger, ...files }))
      })
    case 'kubo': {
      if (config.kubo?.url === undefined || config.kubo.url === '') {
        throw new HearthError('CONFIG_INVALID', 'storage.backend is kubo but storage.kubo.url is not set')
      }
      const kubo = { ...config.kubo, ...checkKuboOptions(config.kubo) }
      return new StorageHolder('kubo', async () => {
        const { createKuboStorage } = await import('./kubo.js')
        return withVerifiedReads(createKuboStorage({ ...kubo, logger }))
      })
    }
    default:
      throw new HearthError('CONFIG_INVALID', 'storage.backend must be "embedded" or "kubo"', { backend: String((config as { backend?: unknown }).backend) })
  }
}

/** Build and start in one step, for commands that use storage once and stop it. */
export async function openStorage (config: StorageConfig, paths: Pick<HomeLayout, 'blocks' | 'datastore'>, logger?: Logger): Promise<StorageService> {
  const storage = createStorage(config, paths, logger)
  await storage.start()
  return storage
}

class StorageHolder implements StorageService {
  readonly name = 'storage'
  #backend: StorageBackend | null = null
  #starting: Promise<StorageBackend> | null = null
  #presence: PresenceReport | null = null

  constructor (readonly kind: StorageBackendKind, private readonly open: () => Promise<StorageBackend>) {}

  async start (): Promise<void> {
    this.#starting ??= this.open()
    try {
      this.#backend = await this.#starting
    } catch (err) {
      this.#starting = null
      throw err
    }
  }

  async stop (): Promise<void> {
    const backend = this.#backend
    this.#backend = null
    this.#starting = null
    if (backend !== null) await backend.stop()
  }

  async status (): Promise<{ backend: StorageBackendKind; presence?: PresenceReport } & StorageHealth> {
    return { backend: this.kind, ...await this.health(), ...(this.#presence !== null ? { presence: this.#presence } : {}) }
  }

  notePresence (report: PresenceReport): void { this.#presence = report }

  damage (): { missing: number; checked: number; repair: string } | null {
    const p = this.#presence
    return p === null || p.state !== 'damaged' ? null : { missing: p.missing, checked: p.checked, repair: p.repair ?? '' }
  }

  async add (bytes: Uint8Array, opts?: { signal?: AbortSignal }): Promise<string> { return await this.#started().add(bytes, opts) }
  async addUnsynced (bytes: Uint8Array): Promise<UnsyncedAdd | null> {
    const backend = this.#started()
    return backend.addUnsynced === undefined ? null : await backend.addUnsynced(bytes)
  }

  async addDeferred (bytes: Uint8Array): Promise<UnsyncedAdd | null> {
    const backend = this.#started()
    return backend.addDeferred === undefined ? null : await backend.addDeferred(bytes)
  }

  async writeDeferred (): Promise<void> { await this.#backend?.writeDeferred?.() }

  async addStream (pieces: AsyncIterable<StreamPiece>, opts?: { signal?: AbortSignal }): Promise<string> {
    const backend = this.#started()
    if (backend.addStream !== undefined) return await backend.addStream(pieces, opts)
    return await backend.add(await joinPieces(pieces), opts)
  }

  stageStream (pieces: AsyncIterable<StreamPiece>): StagedStream | null {
    const backend = this.#started()
    return backend.stageStream?.(pieces) ?? null
  }

  expectLarge (op: 'add' | 'read'): void { this.#backend?.expectLarge?.(op) }
  async pin (cid: string, opts?: { signal?: AbortSignal }): Promise<void> { await this.#started().pin(cid, opts) }
  async get (cid: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array> { return await this.#started().get(cid, opts) }
  async has (cid: string): Promise<boolean> { return this.#backend === null ? false : await this.#backend.has(cid) }
  async present (cid: string): Promise<boolean> {
    const backend = this.#started()
    return await (backend.present?.(cid) ?? backend.has(cid))
  }
  async unpin (cid: string): Promise<void> { await this.#started().unpin(cid) }
  async peerAddresses (): Promise<string[]> {
    const backend = this.#started()
    if (backend.peerAddresses === undefined) throw new HearthError('CONFIG_INVALID', `the ${this.kind} storage serves no blocks to other IPFS nodes`, { backend: this.kind })
    return await backend.peerAddresses()
  }

  async health (): Promise<StorageHealth> {
    if (this.#backend === null) return { ok: false, detail: `${this.kind} storage is not started` }
    return await this.#backend.health()
  }

  #started (): StorageBackend {
    if (this.#backend === null) throw new HearthError('STORAGE_UNAVAILABLE', `${this.kind} storage is not started`, { backend: this.kind })
    return this.#backend
  }
}
