// Where `hearth doctor` fetches a lost ciphertext under its own CID, the way restore does
// (sync/restore-sources.ts): the owner's other devices first, then `restore.gateways`. Nothing is
// started until the first ciphertext is found missing; the device node is stopped by `close`.
import { isHearthError } from '../errors.js'
import type { Logger } from '../log.js'
import type { CiphertextFetcher, FetchAttempt } from '../storage/block-sources.js'
import type { StorageBackend } from '../storage/types.js'
import { restoreFetcher, type RestoreSettings } from '../sync/restore-sources.js'
import type { OfflineDevices } from '../sync/offline-devices.js'

export interface DoctorSourcesDeps {
  restore?: RestoreSettings
  /** False when `sync.enabled` is: then no device is asked. */
  syncEnabled: boolean
  storage: Pick<StorageBackend, 'get' | 'add' | 'pin' | 'unpin'>
  /** Starts the node that reaches this home's known devices (called at most once). */
  openDevices: () => Promise<OfflineDevices>
  logger: Logger
  onProgress?: (line: string) => void
}

export type RemoteOutcome = { source: string } | { tried: string }

export interface DoctorSources {
  /** The same CID from a device or a gateway (verified, stored and pinned), or what each answered. */
  fetch (cid: string): Promise<RemoteOutcome>
  close (): Promise<void>
}

interface Opened { fetcher: CiphertextFetcher | null; devices: OfflineDevices | null; note: string }

export function doctorSources (deps: DoctorSourcesDeps): DoctorSources {
  let opened: Promise<Opened> | null = null

  async function open (): Promise<Opened> {
    let devices: OfflineDevices | null = null
    let note = 'no device was asked: sync.enabled is false'
    if (deps.syncEnabled) {
      try {
        devices = await deps.openDevices()
        if (devices.addresses.length > 0) deps.onProgress?.(`devices: asking ${devices.addresses.length} known device(s) of this owner for what is missing`)
        note = devices.addresses.length === 0 ? 'no device is known (`hearth peers add <its address>`)' : ''
      } catch (err) {
        note = `no device could be asked: ${(err as Error)?.message ?? String(err)}`
      }
    }
    const gateways = deps.restore?.gateways ?? []
    if (gateways.length === 0) note += `${note === '' ? '' : ', and '}no gateway is configured in restore.gateways`
    if (deps.restore === undefined || ((devices?.addresses.length ?? 0) === 0 && gateways.length === 0)) return { fetcher: null, devices, note }
    const fetcher = restoreFetcher({ settings: deps.restore, storage: deps.storage, devices: () => devices?.list() ?? [], logger: deps.logger })
    return { fetcher, devices, note }
  }

  return {
    async fetch (cid) {
      opened ??= open()
      const { fetcher, note } = await opened
      if (fetcher === null) return { tried: ` (${note})` }
      try {
        return { source: (await fetcher.fetch(cid)).source }
      } catch (err) {
        if (!isHearthError(err) || !Array.isArray(err.details?.tried)) throw err
        const remote = (err.details.tried as FetchAttempt[]).filter((a) => a.source !== 'local storage')
        return { tried: `, and no device or gateway had it (${[...remote.map(describe), ...(note === '' ? [] : [note])].join('; ')})` }
      }
    },
    async close () {
      if (opened === null) return
      await (await opened).devices?.close()
    }
  }
}

/** One attempt for a person: the source, its outcome, and why when it failed (without naming the source twice). */
function describe (a: FetchAttempt): string {
  if (a.outcome === 'missing' || a.message === undefined) return `${a.source}: ${a.outcome}`
  const why = a.message.startsWith(`${a.source} `) ? a.message.slice(a.source.length + 1) : a.message
  return `${a.source}: ${a.outcome} (${why})`
}
