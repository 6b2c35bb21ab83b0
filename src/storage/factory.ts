// Builds the configured storage backend for the daemon's composition root and for offline CLI
// commands (`hearth storage ...`). The embedded backend's folders come from the home layout; the
// kubo backend needs only its RPC address.
import type { HomeLayout } from '../home.js'
import type { Logger } from '../log.js'
import { HearthError } from '../errors.js'
import { createEmbeddedStorage } from './embedded.js'
import { createKuboStorage } from './kubo.js'
import type { StorageBackend } from './types.js'

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

export async function createStorage (config: StorageConfig, paths: Pick<HomeLayout, 'blocks' | 'datastore'>, logger?: Logger): Promise<StorageBackend> {
  switch (config.backend) {
    case 'embedded':
      return await createEmbeddedStorage({ blocksDir: paths.blocks, datastoreDir: paths.datastore, logger })
    case 'kubo': {
      if (config.kubo?.url === undefined || config.kubo.url === '') {
        throw new HearthError('CONFIG_INVALID', 'storage.backend is kubo but storage.kubo.url is not set')
      }
      return createKuboStorage({ ...config.kubo, logger })
    }
    default:
      throw new HearthError('CONFIG_INVALID', 'storage.backend must be "embedded" or "kubo"', { backend: String((config as { backend?: unknown }).backend) })
  }
}
