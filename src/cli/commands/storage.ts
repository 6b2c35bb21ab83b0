// `hearth storage migrate|cat`: storage work done directly on the home folder, without the daemon.
//
// `migrate` holds the daemon lock while it runs (the daemon must be stopped, and cannot start
// half-way), opens the current and the new backend, copies and verifies every CID the home
// references (migrate.ts), and only when all of them made it does it switch the configuration.
// Where the CIDs come from (the index) and how the configuration is written belong to other
// components, so they come in as dependencies: `makeStorageCommand({ listCids, setBackend })`.
import { parseArgs } from 'node:util'
import { HearthError, isHearthError } from '../../errors.js'
import type { HomeLayout } from '../../home.js'
import { silentLogger } from '../../log.js'
import { acquireDaemonLock } from '../../daemon/lock.js'
import { openStorage, type StorageConfig, type StorageBackendKind } from '../../storage/factory.js'
import { migrateStorage, type MigrateProgress } from '../../storage/migrate.js'
import { parseCid } from '../../storage/cid.js'
import type { StorageBackend } from '../../storage/types.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { guarded, UsageError, writeJson, errorFromResponse } from '../output.js'
import { daemonRequest } from '../../client/daemon-client.js'
import { PINS_USAGE, runPins } from './storage-pins.js'

export const DEFAULT_KUBO_URL = 'http://127.0.0.1:5001'

const USAGE = `usage: hearth storage migrate --to embedded|kubo [--kubo-url URL] [--kubo-header 'Name: value']...
                              [--kubo-timeout-ms N] [--from embedded|kubo] [--from-kubo-url URL] [--json]
       hearth storage cat <cid> [--backend embedded|kubo] [--kubo-url URL] [--kubo-header 'Name: value']...
  migrate: copy, pin and verify every stored CID on the new backend, then switch the configuration
           to it (the daemon must be stopped). Run again after an interruption: finished CIDs are
           verified and skipped. --kubo-url defaults to ${DEFAULT_KUBO_URL}.
  cat:     write the stored bytes of a CID (the ciphertext) to stdout.
${PINS_USAGE}`

export interface StorageCommandDeps {
  /** Every CID the home references (stored files, pinned schema definitions), streamed. */
  listCids (home: HomeLayout): AsyncIterable<string>
  /** Persist the backend choice in the home's configuration (called only after a full migration). */
  setBackend (home: HomeLayout, cfg: StorageConfig): Promise<void>
  /** The backend the home uses now. Without it, `--from` decides (default: the other kind). */
  readBackend? (home: HomeLayout): Promise<StorageConfig>
  /** How many CIDs listCids will give, for progress; optional. */
  countCids? (home: HomeLayout): Promise<number>
}

const KUBO_OPTIONS = {
  'kubo-url': { type: 'string' },
  'kubo-header': { type: 'string', multiple: true },
  'kubo-timeout-ms': { type: 'string' }
} as const

export function makeStorageCommand (deps: StorageCommandDeps): Command {
  return {
    name: 'storage',
    usage: USAGE,
    async run (ctx) {
      return await guarded(ctx, USAGE, async () => {
        const sub = ctx.args[0]
        if (sub === 'migrate') return await runMigrate(ctx, deps, ctx.args.slice(1))
        if (sub === 'cat') return await runCat(ctx, deps, ctx.args.slice(1))
        if (sub === 'pins') return await runPins(ctx, ctx.args.slice(1))
        throw new UsageError('storage takes migrate, cat or pins')
      })
    }
  }
}

async function runMigrate (ctx: CommandContext, deps: StorageCommandDeps, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...KUBO_OPTIONS, to: { type: 'string' }, from: { type: 'string' }, 'from-kubo-url': { type: 'string' }, json: { type: 'boolean' } }
  })
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`)
  const toKind = backendKind(values.to, '--to')
  const target = backendConfig(toKind, values)
  const lock = await acquireDaemonLock(ctx.home.lock).catch((err: unknown) => {
    if (err instanceof HearthError && err.code === 'DAEMON_LOCKED') {
      throw new HearthError('DAEMON_LOCKED', 'stop the daemon before migrating storage (hearth storage migrate works on the home folder directly)', err.details)
    }
    throw err
  })
  const opened: StorageBackend[] = []
  try {
    const source = await sourceConfig(ctx.home, deps, values, toKind)
    if (sameBackend(source, target)) {
      throw new HearthError('INVALID_ARGUMENT', `the home already uses the ${toKind} backend${toKind === 'kubo' ? ` at ${target.kubo?.url ?? ''}` : ''}`)
    }
    const from = await openStorage(source, ctx.home, silentLogger())
    opened.push(from)
    const to = await openStorage(target, ctx.home, silentLogger())
    opened.push(to)
    for (const [role, backend] of [['current', from], ['new', to]] as const) {
      const h = await backend.health()
      if (!h.ok) throw new HearthError('STORAGE_UNAVAILABLE', `the ${role} ${backend.kind} backend is not reachable: ${h.detail ?? ''}`)
    }
    const total = deps.countCids !== undefined ? await deps.countCids(ctx.home) : undefined
    const progress = progressPrinter(ctx, total)
    const result = await migrateStorage({ from, to, cids: deps.listCids(ctx.home), total, onProgress: progress.update })
    progress.finish()
    await deps.setBackend(ctx.home, target)
    if (values.json === true) {
      writeJson(ctx, { from: source.backend, to: toKind, ...result })
    } else {
      ctx.stdout.write(`migrated ${result.copied + result.skipped} CID(s) from ${source.backend} to ${toKind}: ` +
        `${result.copied} copied, ${result.skipped} already there, ${result.verified} verified; storage.backend is now ${toKind}\n`)
    }
    return EXIT.OK
  } finally {
    for (const backend of opened.reverse()) await backend.stop().catch(() => {})
    await lock.release()
  }
}

async function runCat (ctx: CommandContext, deps: StorageCommandDeps, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { ...KUBO_OPTIONS, backend: { type: 'string' } } })
  if (positionals.length !== 1) throw new UsageError('storage cat takes one CID')
  const cid = parseCid(positionals[0]).toString()
  const write = async (bytes: Uint8Array): Promise<number> => {
    await new Promise<void>((resolve, reject) => {
      ctx.stdout.write(bytes, (err) => { if (err != null) reject(err); else resolve() })
    })
    return EXIT.OK
  }
  if (values.backend === undefined) {
    // a running daemon holds the embedded node's folders: ask it; otherwise open them here
    const viaDaemon = await daemonRequest(ctx.home.socket, { path: `/v1/storage/${cid}` }).catch((err: unknown) => {
      if (isHearthError(err, 'DAEMON_NOT_RUNNING')) return null
      throw err
    })
    if (viaDaemon !== null) {
      if (viaDaemon.status !== 200) throw errorFromResponse(viaDaemon)
      return await write(viaDaemon.body)
    }
  }
  const config = values.backend !== undefined
    ? backendConfig(backendKind(values.backend, '--backend'), values)
    : (deps.readBackend !== undefined ? await deps.readBackend(ctx.home) : { backend: 'embedded' as const })
  const storage = await openStorage(config, ctx.home, silentLogger())
  try {
    return await write(await storage.get(cid))
  } finally {
    await storage.stop()
  }
}

function backendKind (value: string | undefined, flag: string): StorageBackendKind {
  if (value === 'embedded' || value === 'kubo') return value
  throw new UsageError(value === undefined ? `${flag} embedded|kubo is required` : `${flag} must be embedded or kubo, not ${JSON.stringify(value)}`)
}

function backendConfig (kind: StorageBackendKind, values: { 'kubo-url'?: string; 'kubo-header'?: string[]; 'kubo-timeout-ms'?: string }): StorageConfig {
  if (kind === 'embedded') return { backend: 'embedded' }
  const headers: Record<string, string> = {}
  for (const h of values['kubo-header'] ?? []) {
    const i = h.indexOf(':')
    if (i <= 0) throw new UsageError(`--kubo-header must look like 'Name: value'`)
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim()
  }
  let timeoutMs: number | undefined
  if (values['kubo-timeout-ms'] !== undefined) {
    timeoutMs = Number(values['kubo-timeout-ms'])
    if (!Number.isInteger(timeoutMs) || timeoutMs < 100) throw new UsageError('--kubo-timeout-ms must be an integer >= 100')
  }
  return { backend: 'kubo', kubo: { url: values['kubo-url'] ?? DEFAULT_KUBO_URL, headers, ...(timeoutMs !== undefined ? { timeoutMs } : {}) } }
}

async function sourceConfig (home: HomeLayout, deps: StorageCommandDeps, values: { from?: string; 'from-kubo-url'?: string }, toKind: StorageBackendKind): Promise<StorageConfig> {
  if (values.from !== undefined) {
    const kind = backendKind(values.from, '--from')
    return kind === 'embedded' ? { backend: 'embedded' } : { backend: 'kubo', kubo: { url: values['from-kubo-url'] ?? DEFAULT_KUBO_URL } }
  }
  if (deps.readBackend !== undefined) return await deps.readBackend(home)
  if (values['from-kubo-url'] !== undefined) return { backend: 'kubo', kubo: { url: values['from-kubo-url'] } }
  return toKind === 'kubo' ? { backend: 'embedded' } : { backend: 'kubo', kubo: { url: DEFAULT_KUBO_URL } }
}

function sameBackend (a: StorageConfig, b: StorageConfig): boolean {
  if (a.backend !== b.backend) return false
  return a.backend === 'embedded' || normalizeUrl(a.kubo?.url) === normalizeUrl(b.kubo?.url)
}

function normalizeUrl (url: string | undefined): string {
  return (url ?? '').replace(/\/+$/, '').replace(/\/api\/v0$/, '')
}

/**
 * Progress on stderr, at most about five updates a second plus the last one. On a terminal one
 * line is rewritten in place; otherwise (a log, a pipe) a line about once a second. The count
 * is clamped to the total, which is only an estimate made before the copy started.
 */
export function progressPrinter (ctx: Pick<CommandContext, 'stderr'>, total: number | undefined): { update: (p: MigrateProgress) => void; finish: () => void } {
  const inPlace = (ctx.stderr as { isTTY?: boolean }).isTTY === true
  const every = inPlace ? 200 : 1000
  let last = 0
  let latest: MigrateProgress | undefined
  const text = (p: MigrateProgress): string => {
    if (total === undefined || total === 0) return `storage migrate: ${p.done} CID(s) done`
    const done = Math.min(p.done, total)
    return `storage migrate: ${done}/${total} CID(s) done (${Math.floor(done * 100 / total)} %)`
  }
  const print = (p: MigrateProgress, final: boolean): void => {
    if (inPlace) ctx.stderr.write(`\r\x1b[K${text(p)}${final ? '\n' : ''}`)
    else ctx.stderr.write(`${text(p)}\n`)
  }
  return {
    update: (p) => {
      latest = p
      const now = Date.now()
      if (now - last >= every) { last = now; print(p, false) }
    },
    finish: () => { if (latest !== undefined) print(latest, true) }
  }
}
