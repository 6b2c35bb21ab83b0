// `hearth peers`, `hearth sync`, `hearth restore`: the owner's devices and restore from the chain.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'

const PEERS_USAGE = `usage: hearth peers [--json]                  known and connected devices, last sync, files pending each way
       hearth peers add <multiaddr>/p2p/<id>   keep a device connected (persisted)
       hearth peers rm <peerId|multiaddr>      forget a device: stop dialling it, drop its address and cursor`

export interface WaitingForSchema { count: number, bySchema: Array<{ schemaId: string, count: number }> }

/** One line about files received from other devices that wait here for their schema. */
export function waitingLine (w: WaitingForSchema): string {
  const schemas = w.bySchema.slice(0, 5).map((x) => `${x.schemaId} (${x.count})`).join(', ')
  return `${w.count} file(s) from other devices wait for their schema: ${schemas}${w.bySchema.length > 5 ? ', …' : ''} — they are written once the schema is known (\`hearth schema add\`, or the chain)`
}

function ago (ms: number | null): string {
  if (ms === null) return 'never'
  const s = Math.round((Date.now() - ms) / 1000)
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`
}

export const peersCommand: Command = {
  name: 'peers',
  usage: PEERS_USAGE,
  async run (ctx) {
    return await guarded(ctx, PEERS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      if (positionals[0] === 'add') {
        const address = positionals[1]
        if (address === undefined || positionals.length > 2) throw new UsageError('peers add takes one multiaddr')
        if (!/\/p2p\/[^/]+\/?$/.test(address)) {
          throw new UsageError(`${address} has no peer id: give the whole address, ending in /p2p/<peerId>, as the other device's \`hearth peers\` prints it`)
        }
        const r = await callDaemon(ctx, { method: 'POST', path: '/v1/peers', body: { multiaddr: address } })
        if (values.json === true) writeJson(ctx, r); else ctx.stdout.write(`added ${String(r.added)}\n`)
        return EXIT.OK
      }
      if (positionals[0] === 'rm') {
        if (positionals.length !== 2) throw new UsageError('peers rm takes one peer id or multiaddr')
        const r = await callDaemon(ctx, { method: 'DELETE', path: `/v1/peers/${encodeURIComponent(positionals[1]!)}` })
        if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
        const removed = r.removed as { peerId: string | null, addresses: string[] }
        ctx.stdout.write(`removed ${removed.peerId ?? positionals[1]!}${removed.addresses.length > 0 ? ` (${removed.addresses.join(', ')})` : ''}\n`)
        return EXIT.OK
      }
      if (positionals.length > 0) throw new UsageError('peers takes no argument, add <multiaddr> or rm <peer>')
      const s = await callDaemon(ctx, { path: '/v1/peers' })
      if (values.json === true) { writeJson(ctx, s); return EXIT.OK }
      if (s.enabled !== true) { ctx.stdout.write('sync is disabled\n'); return EXIT.OK }
      ctx.stdout.write(`this device ${String(s.peerId)}\n${(s.addresses as string[]).map((a) => `  ${a}`).join('\n')}\n`)
      for (const problem of (s.problems ?? []) as string[]) ctx.stdout.write(`PROBLEM: ${problem}\n`)
      for (const p of s.peers as Array<Record<string, any>>) {
        const waiting = Number(p.waitingForSchema ?? 0) > 0 ? `  ${String(p.waitingForSchema)} waiting for a schema` : ''
        ctx.stdout.write(`${String(p.peerId)}  ${p.connected === true ? 'connected' : 'offline  '}  last sync ${ago(p.lastSyncAt ?? null)}  pending in ${String(p.pendingIn ?? '?')} out ${String(p.pendingOut ?? '?')}${waiting}\n`)
        if (p.lastError != null) ctx.stdout.write(`  last error: ${String(p.lastError)}\n`)
      }
      const w = s.waitingForSchema as { count: number } | undefined
      if (w !== undefined && w.count > 0) ctx.stdout.write(`${waitingLine(w as WaitingForSchema)}\n`)
      return EXIT.OK
    })
  }
}

const SYNC_USAGE = 'usage: hearth sync [--json]\n  runs a sync round with every connected device now'
export const syncCommand: Command = {
  name: 'sync',
  usage: SYNC_USAGE,
  async run (ctx) {
    return await guarded(ctx, SYNC_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' } } })
      const r = await callDaemon(ctx, { method: 'POST', path: '/v1/sync', timeoutMs: 30 * 60_000 })
      if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
      if (r.rounds.length === 0) ctx.stdout.write('no device connected\n')
      for (const round of r.rounds as Array<Record<string, any>>) {
        const t = round.totals
        // a device syncs on its own as soon as it connects: a round asked for after that finds nothing new
        const outcome = round.ok !== true
          ? `failed: ${String(round.error)}, ${String(t.fetched)} fetched`
          : Number(t.fetched) === 0 && Number(t.tombstones ?? 0) === 0
            ? 'ok, already in sync: nothing new since the last round (devices sync on their own once connected; `hearth ls` lists what arrived)'
            : `ok, ${String(t.fetched)} fetched (${String(t.fetchedBytes)} bytes), ${String(t.handled)} handled`
        ctx.stdout.write(`${String(round.peerId)}: ${outcome}\n`)
      }
      return r.rounds.every((x: { ok: boolean }) => x.ok) ? EXIT.OK : EXIT.FAILURE
    })
  }
}

const RESTORE_USAGE = 'usage: hearth restore [--json]\n  restores every file the owner registered on chain into this home (resumable, idempotent)'
export const restoreCommand: Command = {
  name: 'restore',
  usage: RESTORE_USAGE,
  async run (ctx) {
    return await guarded(ctx, RESTORE_USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { json: { type: 'boolean' } } })
      ctx.stderr.write('restoring from the chain…\n')
      const pending = callDaemon(ctx, { method: 'POST', path: '/v1/restore', timeoutMs: 24 * 3600_000 })
      // progress while the daemon works: what it reports under sync.restore in its status
      const ticker = setInterval(() => {
        callDaemon(ctx, { path: '/v1/peers' }).then((s) => {
          const p = s.restore
          if (p !== null && p !== undefined && p.done !== true) ctx.stderr.write(`  block ${String(p.scannedBlock)}/${String(p.toBlock)}: ${String(p.found)} found, ${String(p.written)} restored, ${String(p.failed)} failed\n`)
        }, () => {})
      }, 1000)
      const r = await pending.finally(() => clearInterval(ticker))
      if (values.json === true) writeJson(ctx, r)
      else {
        ctx.stdout.write(`blocks ${String(r.fromBlock)}–${String(r.toBlock)}: ${String(r.found)} registered files, ${String(r.written)} restored, ${String(r.present)} already here, ${String(r.failed)} failed\n`)
        for (const f of r.failures as Array<Record<string, string>>) ctx.stdout.write(`  file ${f.fileId} ${f.url}: ${f.errorCode} ${f.message}\n`)
        for (const line of restoreAdvice(r.failures as Array<{ errorCode: string }>)) ctx.stdout.write(`${line}\n`)
      }
      return r.failed > 0 ? EXIT.FAILURE : EXIT.OK
    })
  }
}

/** What to do about the failures a restore reports, one hint per kind of failure. */
export function restoreAdvice (failures: Array<{ errorCode: string }>): string[] {
  const count = (code: string): number => failures.filter((f) => f.errorCode === code).length
  const out: string[] = []
  const missing = count('STORAGE_NOT_FOUND')
  const refused = count('STORAGE_VERIFY_FAILED')
  if (missing > 0) {
    out.push(`${missing} ciphertext(s) are in no storage, connected device or gateway this device reaches (each line above says what was tried). Any of these brings them:`,
      '  - start a device that holds them, connected to this one (`hearth peers add <its address>`); restore asks it directly',
      '  - or name an IPFS gateway that has them: `hearth config set restore.gateways=\'["https://gateway.example"]\'` and restart',
      '  - or point this device at an IPFS node that has them: `hearth storage migrate --to kubo --kubo-url URL`',
      '  then run `hearth restore` again: it resumes where it stopped')
  }
  if (refused > 0) {
    out.push(`${refused} ciphertext(s) were refused: a device or gateway sent bytes that do not match the CID, and nothing was stored. Remove that gateway from restore.gateways (or check that device), then \`hearth restore\` again`)
  }
  const schema = count('SCHEMA_NOT_FOUND') + count('DEFINITION_UNAVAILABLE')
  if (schema > 0) out.push(`${schema} file(s) wait for their schema (its source is unreachable); \`hearth restore\` again once it answers`)
  const full = count('STORAGE_FULL')
  if (full > 0) out.push(`${full} file(s) could not be stored here: the disk is full; free some space, then \`hearth restore\` again`)
  const down = count('STORAGE_UNAVAILABLE') + count('CHAIN_UNAVAILABLE') + count('TIMEOUT')
  if (down > 0) out.push(`${down} file(s) failed because storage or the chain did not answer; \`hearth status\` shows which, then \`hearth restore\` again`)
  return out
}
