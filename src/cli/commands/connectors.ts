// `hearth connectors` lists the installed connectors (what a consent screen shows for each scope);
// `hearth import <connector> <export>` runs one over a platform export and submits its items
// through the daemon. The connector runs in the CLI process: the export is read where the user
// has it, and only the resulting data objects cross the socket.
import { basename, dirname, isAbsolute, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { HearthError } from '../../errors.js'
import { runImport, type ImportProgress, type ImportSummary } from '../../connectors/import.js'
import { connectorDirs, findConnector, loadConnectors } from '../../connectors/loader.js'
import { daemonSubmit } from '../../connectors/submit.js'
import { listConnectorsBody } from '../../connectors/listing.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'
import { plural } from '../text.js'

export { listConnectorsBody, type ConnectorsBody } from '../../connectors/listing.js'

const CONNECTORS_USAGE = 'usage: hearth connectors [--json]\n  lists the installed connectors (shipped ones and <home>/plugins) with their scopes'
export const connectorsCommand: Command = {
  name: 'connectors',
  usage: CONNECTORS_USAGE,
  async run (ctx) {
    return await guarded(ctx, CONNECTORS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      if (positionals.length > 0) throw new UsageError('connectors takes no arguments')
      const body = listConnectorsBody(await loadConnectors(connectorDirs(ctx.home)))
      if (values.json === true) { writeJson(ctx, body); return EXIT.OK }
      if (body.connectors.length === 0) ctx.stdout.write('no connectors installed\n')
      for (const c of body.connectors) {
        ctx.stdout.write(`${c.connectorId}  ${c.displayName} ${c.version}\n`)
        for (const s of c.scopes) ctx.stdout.write(`  ${s.scope}  ${s.label}${s.optional === true ? ' (optional: import --with ' + s.scope + ')' : ''}\n    ${s.description}\n`)
      }
      for (const e of body.errors) ctx.stderr.write(`plugin ${e.id} not loaded: ${e.code}: ${e.message}\n`)
      return EXIT.OK
    })
  }
}

const IMPORT_USAGE = 'usage: hearth import <connector> <export.zip|folder|file.json> [more parts …] [--json] [--concurrency N] [--with <scope> …]\n' +
  '  reads a platform export with the connector and stores its data through the daemon;\n' +
  '  --with imports an optional scope too (raw location points: hearth connectors marks them);\n' +
  '  an export split into several archives is given as all of them, or as the folder holding them;\n' +
  '  importing the same export again stores nothing new'
export const importCommand: Command = {
  name: 'import',
  usage: IMPORT_USAGE,
  async run (ctx) {
    return await guarded(ctx, IMPORT_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { json: { type: 'boolean' }, concurrency: { type: 'string' }, with: { type: 'string', multiple: true } }
      })
      if (positionals.length < 2) throw new UsageError('import takes a connector id and the path of an export (or of each of its parts)')
      const [id, ...exportPaths] = positionals as [string, ...string[]]
      const concurrency = values.concurrency === undefined ? 4 : Number(values.concurrency)
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError('--concurrency must be an integer from 1 to 64')

      const loaded = await loadConnectors(connectorDirs(ctx.home))
      const connector = findConnector(loaded, id)
      if (connector === undefined) {
        const broken = loaded.errors.find((e) => e.id === id)
        if (broken !== undefined) throw new HearthError('PLUGIN_INVALID', broken.message)
        const known = loaded.connectors.map((c) => c.id).join(', ')
        throw new HearthError('NOT_FOUND', `no connector ${JSON.stringify(id)}; installed: ${known === '' ? 'none' : known}`)
      }
      // Fail fast, before reading a large export, when there is no daemon to submit to.
      await callDaemon(ctx, { path: '/health', timeoutMs: 10_000 })

      const progress = progressPrinter(ctx)
      const startedAt = new Date().toISOString()
      const summary = await runImport({
        connector,
        source: exportPaths.map((p) => resolve(p)),
        submit: daemonSubmit({ socketPath: ctx.home.socket }),
        onProgress: progress.onProgress,
        concurrency,
        include: values.with ?? []
      })
      progress.finish()
      await recordFinished(ctx, exportPaths[0]!, startedAt, summary)
      const located = withAbsolutePaths(summary, ctx.home.data)
      if (values.json === true) writeJson(ctx, located)
      else printSummary(ctx, located)
      if (located.failure !== undefined) return located.failure.code === 'DAEMON_NOT_RUNNING' ? EXIT.NOT_RUNNING : EXIT.FAILURE
      return located.total.rejected > 0 ? EXIT.FAILURE : EXIT.OK
    })
  }
}

/**
 * The daemon lists the import beside the dashboard's (its "Recent imports"). Only a record: a
 * daemon that cannot take it (stopped meanwhile, an older version) changes nothing of the import.
 */
async function recordFinished (ctx: CommandContext, exportPath: string, startedAt: string, s: ImportSummary): Promise<void> {
  if (s.failure?.code === 'DAEMON_NOT_RUNNING') return
  const body = { name: basename(resolve(exportPath)), connectorId: s.connectorId, startedAt, total: s.total, ...(s.failure !== undefined ? { failure: { code: s.failure.code, message: (s.failure.message || s.failure.code).slice(0, 2000) } } : {}) }
  await callDaemon(ctx, { method: 'POST', path: '/v1/imports/finished', body, timeoutMs: 10_000 }).catch(() => {})
}

/** The daemon answers paths relative to its data folder; the user wants to open them. */
function withAbsolutePaths (summary: ImportSummary, dataDir: string): ImportSummary {
  return {
    ...summary,
    scopes: summary.scopes.map((s) => ({ ...s, paths: s.paths.map((p) => isAbsolute(p) ? p : resolve(dataDir, p)) }))
  }
}

/** The import's progress on stderr; `finish` prints the last count, so it agrees with the summary. */
function progressPrinter (ctx: CommandContext): { onProgress: (e: ImportProgress) => void; finish: () => void } {
  const tty = (ctx.stderr as { isTTY?: boolean }).isTTY === true
  const counts = { stored: 0, duplicate: 0, rejected: 0, 'waiting-schema': 0 }
  let last = 0
  let done = 0
  let printed = 0
  const line = (): string => `  ${plural(done, 'item')}: ${counts.stored} stored, ${counts.duplicate} duplicate, ${counts.rejected} rejected, ${counts['waiting-schema']} waiting for a schema`
  const print = (): void => { printed = done; ctx.stderr.write(tty ? `\r\x1b[K${line()}` : `${line()}\n`) }
  const finish = (): void => { if (done !== printed && !tty) print() }
  return { finish, onProgress: (e) => {
    if (e.type === 'opened') {
      const what = e.parts > 1 ? `${e.parts} parts` : e.kind
      ctx.stderr.write(`reading ${e.location} (${what}, ${plural(e.entries, 'entry', 'entries')}, exported ${e.exportedAt})\n`)
    } else if (e.type === 'skipped') {
      // Listed in the summary; the progress line stays about items.
    } else if (e.type === 'note') {
      ctx.stderr.write(`${tty ? '\r\x1b[K' : ''}note: ${e.message}\n`)
    } else {
      counts[e.status]++
      done = e.done
      const now = Date.now()
      // One line a second (or a rewritten line on a terminal): thousands of items must not flood the log.
      if (now - last >= 1000) {
        last = now
        print()
      }
    }
  } }
}

function printSummary (ctx: CommandContext, s: ImportSummary): void {
  const out = (text: string): void => { ctx.stdout.write(text + '\n') }
  if ((ctx.stderr as { isTTY?: boolean }).isTTY === true) ctx.stderr.write('\r\x1b[K')
  const parts = s.source.parts !== undefined ? ` and ${s.source.parts.length - 1} more part(s)` : ''
  out(`${s.connectorId}: ${s.source.location}${parts} (exported ${s.source.exportedAt})`)
  const width = Math.max(5, ...s.scopes.map((r) => r.scope.length))
  out(`  ${'scope'.padEnd(width)}  stored  duplicate  rejected  waiting`)
  for (const r of s.scopes) {
    out(`  ${r.scope.padEnd(width)}  ${String(r.stored).padStart(6)}  ${String(r.duplicate).padStart(9)}  ${String(r.rejected).padStart(8)}  ${String(r.waiting).padStart(7)}`)
  }
  const withFiles = s.scopes.filter((r) => r.paths.length > 0)
  if (withFiles.length > 0) {
    out('files:')
    for (const r of withFiles) {
      if (r.paths.length <= 5) for (const p of r.paths) out(`  ${p}`)
      else for (const dir of new Set(r.paths.map((p) => dirname(p)))) out(`  ${dir}/ (${plural(r.paths.filter((p) => dirname(p) === dir).length, 'file')})`)
    }
  }
  if (s.rejected.length > 0) {
    out('rejected:')
    for (const r of s.rejected) {
      out(`  ${r.scope} ${r.collectedAt}${r.label !== undefined ? ` (${r.label})` : ''}`)
      for (const reason of r.reasons.slice(0, 10)) out(`    - ${reason}`)
      if (r.reasons.length > 10) out(`    - …and ${r.reasons.length - 10} more`)
    }
  }
  if (s.skipped.length > 0) {
    out('not imported:')
    for (const k of s.skipped) out(`  ${k.path}: ${k.reason}`)
  }
  if (s.notes.length > 0) {
    out('notes:')
    for (const n of s.notes) out(`  - ${n}`)
  }
  if (s.failure !== undefined) ctx.stderr.write(`error ${s.failure.code}: import stopped: ${s.failure.message}\n`)
}
