// `hearth config`: the effective configuration with where each value came from, and
// `hearth config set|unset`, which change config.json (validated as a whole before it is written).
import { parseArgs } from 'node:util'
import { loadConfigWithSources } from '../../config/resolve.js'
import { parseAssignment, persistConfigChange } from '../../config/persist.js'
import { leafKeys } from '../../config/schema.js'
import { getPath } from '../../config/resolve.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { guarded, UsageError, writeJson } from '../output.js'

const USAGE = `usage: hearth config [--json] [--set path=value ...]
       hearth config set path=value [path=value ...]
       hearth config unset path [path ...]
  prints the effective configuration and the source of each value (default, file, env, --set);
  --set shows what a start with those flags would use and saves nothing.
  set/unset change config.json (validated first); a running daemon picks most keys up at its next start`

async function show (ctx: CommandContext, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, set: { type: 'string', multiple: true } } })
  const { config, sources } = await loadConfigWithSources(ctx.home.config, ctx.env, values.set ?? [])
  if (values.json === true) {
    writeJson(ctx, { home: ctx.home.root, configFile: ctx.home.config, config, sources })
  } else {
    const rows = leafKeys().map(({ path }) => [path, JSON.stringify(getPath(config, path)), sources[path] ?? 'default'])
    const width = Math.max(...rows.map((r) => r[0]!.length))
    let out = `# ${ctx.home.config}\n`
    for (const [path, value, source] of rows) out += `${path!.padEnd(width)}  ${value}${source === 'default' ? '' : `   (${source})`}\n`
    ctx.stdout.write(out)
  }
  if ((values.set ?? []).length > 0) ctx.stderr.write('note: --set values are not saved; use `hearth config set path=value` to persist them\n')
  return EXIT.OK
}

async function change (ctx: CommandContext, set: Record<string, unknown>): Promise<number> {
  const result = await persistConfigChange(ctx.home.config, { set }, { env: ctx.env })
  for (const path of Object.keys(set)) {
    const value = getPath(result.next.config, path)
    ctx.stdout.write(`${path} = ${JSON.stringify(value)}${set[path] === undefined ? ' (default)' : ''}\n`)
  }
  for (const [path, source] of Object.entries(result.overridden)) ctx.stderr.write(`note: ${path} is overridden by ${source}; the saved value applies once that is gone\n`)
  if (result.restartRequired.length > 0) ctx.stdout.write(`saved to ${ctx.home.config}; restart the daemon to apply ${result.restartRequired.join(', ')}\n`)
  else ctx.stdout.write(`saved to ${ctx.home.config}\n`)
  return EXIT.OK
}

export const configCommand: Command = {
  name: 'config',
  usage: USAGE,
  async run (ctx) {
    return await guarded(ctx, USAGE, async () => {
      const [sub, ...rest] = ctx.args
      if (sub === 'set') {
        if (rest.length === 0) throw new UsageError('config set needs path=value')
        return await change(ctx, Object.fromEntries(rest.map(parseAssignment)))
      }
      if (sub === 'unset') {
        if (rest.length === 0) throw new UsageError('config unset needs a key path')
        return await change(ctx, Object.fromEntries(rest.map((path) => [path, undefined])))
      }
      return await show(ctx, ctx.args)
    })
  }
}
