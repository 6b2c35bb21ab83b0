// Data commands: put, get, ls, versions, rm — thin clients of the daemon's /v1/data routes.
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { HearthError } from '../../errors.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'
import { findJsonProblem } from '../json-position.js'
import { waitingLine, type WaitingForSchema } from './sync.js'
import { confirmOrRefuse } from '../confirm.js'
import { plural } from '../text.js'

async function readAll (stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string))
  return Buffer.concat(chunks)
}

function enc (s: string): string { return encodeURIComponent(s) }

/** The body of `put`: the file (or stdin) checked as JSON here, so a mistake names file and line. */
async function readJsonSource (ctx: CommandContext, source: string): Promise<Buffer> {
  const label = source === '-' ? 'stdin' : source
  let body: Buffer
  try {
    body = source === '-' ? await readAll(ctx.stdin) : await readFile(source)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (err as Error).message
    throw new HearthError('INVALID_ARGUMENT', `cannot read ${label}: ${why}`, { path: label })
  }
  const problem = findJsonProblem(body.toString('utf8'))
  if (problem !== null) {
    throw new HearthError('INVALID_JSON', `${label} is not JSON: line ${problem.line}, column ${problem.column}: ${problem.message}`,
      { path: label, line: problem.line, column: problem.column })
  }
  return body
}

const PUT_USAGE = 'usage: hearth put <scope> <file|-> [--collected-at ISO] [--json]\n  stores the JSON object in the file (or stdin) as the data of a new file of <scope>'
export const putCommand: Command = {
  name: 'put',
  usage: PUT_USAGE,
  async run (ctx) {
    return await guarded(ctx, PUT_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, 'collected-at': { type: 'string' } } })
      if (positionals.length !== 2) throw new UsageError('put takes a scope and a file (or - for stdin)')
      const [scope, source] = positionals as [string, string]
      const body = await readJsonSource(ctx, source)
      const query = values['collected-at'] !== undefined ? `?collectedAt=${enc(values['collected-at'])}` : ''
      const result = await callDaemon(ctx, { method: 'POST', path: `/v1/data/${enc(scope)}${query}`, body, headers: { 'content-type': 'application/json' } })
      if (values.json === true) writeJson(ctx, result)
      else if (result.status === 'queued') {
        ctx.stdout.write(`queued ${String(result.scope)} ${String(result.collectedAt)}\n  written to ${String(result.path)}\n` +
          `  storage is unavailable (${String(result.reason ?? 'no detail')}); it will be encrypted and stored as soon as storage answers\n` +
          `  \`hearth versions ${String(result.scope)}\` lists it, \`hearth status\` shows the storage state\n`)
      } else ctx.stdout.write(`${String(result.status)} ${String(result.scope)} ${String(result.collectedAt)} ${String(result.url)}\n  ${String(result.path)}\n`)
      return EXIT.OK
    })
  }
}

const GET_USAGE = 'usage: hearth get <scope> [--at ISO | --file-id N] [--json]\n  prints the latest (or the chosen) envelope of <scope>'
export const getCommand: Command = {
  name: 'get',
  usage: GET_USAGE,
  async run (ctx) {
    return await guarded(ctx, GET_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, at: { type: 'string' }, 'file-id': { type: 'string' } } })
      if (positionals.length !== 1) throw new UsageError('get takes one scope')
      const params = new URLSearchParams()
      if (values.at !== undefined) params.set('at', values.at)
      if (values['file-id'] !== undefined) params.set('fileId', values['file-id'])
      const q = params.size > 0 ? `?${params.toString()}` : ''
      const envelope = await callDaemon(ctx, { path: `/v1/data/${enc(positionals[0]!)}${q}` })
      writeJson(ctx, envelope)
      return EXIT.OK
    })
  }
}

const LS_USAGE = 'usage: hearth ls [scopePrefix] [--limit N] [--offset N] [--json]'
export const lsCommand: Command = {
  name: 'ls',
  usage: LS_USAGE,
  async run (ctx) {
    return await guarded(ctx, LS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, limit: { type: 'string' }, offset: { type: 'string' } } })
      const params = new URLSearchParams()
      if (positionals[0] !== undefined) params.set('scopePrefix', positionals[0])
      if (values.limit !== undefined) params.set('limit', values.limit)
      if (values.offset !== undefined) params.set('offset', values.offset)
      const result = await callDaemon(ctx, { path: `/v1/data?${params.toString()}` })
      if (values.json === true) { writeJson(ctx, result); return EXIT.OK }
      for (const s of result.scopes as Array<{ scope: string, count: number, latestCollectedAt: string }>) {
        ctx.stdout.write(`${s.scope.padEnd(40)} ${String(s.count).padStart(7)}  ${s.latestCollectedAt}\n`)
      }
      // files from other devices whose schema is unknown have no scope yet: say they exist
      const sync = await callDaemon(ctx, { path: '/v1/peers' }).catch(() => null)
      const waiting = sync?.waitingForSchema as WaitingForSchema | undefined
      if (waiting !== undefined && waiting.count > 0) ctx.stdout.write(`${waitingLine(waiting)}\n`)
      else if (result.scopes.length === 0) ctx.stdout.write('no data yet\n')
      return EXIT.OK
    })
  }
}

const VERSIONS_USAGE = 'usage: hearth versions <scope> [--limit N] [--offset N] [--json]\n  newest first, --limit (default 100, at most 1000) per page from --offset'
export const versionsCommand: Command = {
  name: 'versions',
  usage: VERSIONS_USAGE,
  async run (ctx) {
    return await guarded(ctx, VERSIONS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, limit: { type: 'string' }, offset: { type: 'string' } } })
      if (positionals.length !== 1) throw new UsageError('versions takes one scope')
      const params = new URLSearchParams()
      if (values.limit !== undefined) params.set('limit', values.limit)
      if (values.offset !== undefined) params.set('offset', values.offset)
      const scope = positionals[0]!
      const result = await callDaemon(ctx, { path: `/v1/data/${enc(scope)}/versions?${params.toString()}` })
      const total = Number(result.total)
      if (total === 0) throw new HearthError('NOT_FOUND', `no versions of ${scope}: nothing of this scope is stored or waiting here (\`hearth ls\` lists the scopes)`)
      if (values.json === true) { writeJson(ctx, result); return EXIT.OK }
      const versions = result.versions as Array<Record<string, unknown>>
      for (const v of versions) {
        ctx.stdout.write(`${String(v.collectedAt)}  ${String(v.state).padEnd(16)} schema ${String(v.schemaId ?? '-')}  file ${String(v.fileId ?? '-')}  ${String(v.url ?? '-')}\n`)
        if (v.state !== 'stored' && v.state !== 'registered') {
          for (const reason of ((v.reasons ?? []) as string[]).slice(0, 3)) ctx.stdout.write(`    ${reason}\n`)
        }
      }
      const offset = Number(result.offset ?? 0)
      const shownTo = offset + versions.length
      if (versions.length === 0) ctx.stdout.write(`no versions from offset ${offset}; ${total} in all\n`)
      else ctx.stdout.write(`versions ${offset + 1}–${shownTo} of ${total}\n`)
      if (shownTo < total && versions.length > 0) {
        ctx.stdout.write(`more: hearth versions ${scope} --offset ${shownTo}${values.limit !== undefined ? ` --limit ${values.limit}` : ''}\n`)
      }
      return EXIT.OK
    })
  }
}

const RM_USAGE = `usage: hearth rm <scope> [--yes] [--json]
  deletes <scope> on this device (its files, index entries and unpinned ciphertexts) and on every
  other device of yours that syncs with it; asks first on a terminal, --yes skips the question`

/** Who a deletion reaches besides this device: the devices sync knows, or why none. */
async function otherDevices (ctx: CommandContext): Promise<{ count: number; enabled: boolean }> {
  const s = await callDaemon(ctx, { path: '/v1/peers' }).catch(() => null)
  if (s?.enabled !== true) return { count: 0, enabled: false }
  return { count: Array.isArray(s.peers) ? s.peers.length : 0, enabled: true }
}

function reachLine (devices: { count: number; enabled: boolean }): string {
  if (!devices.enabled) return 'sync is disabled here: your other devices delete it once sync is on and they sync with this one'
  if (devices.count === 0) return 'no other device is known here yet; any that syncs with this one later deletes it too'
  return devices.count === 1 ? 'your other device known here deletes it when it next syncs with this one' : `your ${devices.count} other devices known here delete it when they next sync with this one`
}

export const rmCommand: Command = {
  name: 'rm',
  usage: RM_USAGE,
  async run (ctx) {
    return await guarded(ctx, RM_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } } })
      if (positionals.length !== 1) throw new UsageError('rm takes one scope')
      const scope = positionals[0]!
      if (values.yes !== true) {
        const [listed, devices] = await Promise.all([callDaemon(ctx, { path: `/v1/data/${enc(scope)}/versions?limit=1` }), otherDevices(ctx)])
        const reach = devices.enabled && devices.count > 0 ? ` and on your ${plural(devices.count, 'other device')} (when they next sync with this one)` : ''
        await confirmOrRefuse(ctx, {
          yes: false,
          command: `hearth rm ${scope}`,
          question: `Delete ${plural(Number(listed.total), 'version')} of ${scope} on this device${reach}? On-chain registrations stay.`,
          declined: `not deleted: ${scope} is unchanged`
        })
      }
      const result = await callDaemon(ctx, { method: 'DELETE', path: `/v1/data/${enc(scope)}` })
      const devices = await otherDevices(ctx)
      if (values.json === true) { writeJson(ctx, { ...result, otherDevices: devices.count, syncEnabled: devices.enabled }); return EXIT.OK }
      ctx.stdout.write(`deleted ${plural(Number(result.deleted), 'file')} of ${String(result.scope)} on this device, unpinned ${String(result.unpinned)}\n  ${reachLine(devices)}\n`)
      return EXIT.OK
    })
  }
}
