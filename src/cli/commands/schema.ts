// `hearth schema add|ls|show`: schemas through the daemon, which pins and (when a chain is
// configured) registers added definitions.
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { HearthError } from '../../errors.js'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'

const USAGE = `usage: hearth schema add <definition.json> [--json]
       hearth schema ls [--json]
       hearth schema show <scope|schemaId> [--json]`

export const schemaCommand: Command = {
  name: 'schema',
  usage: USAGE,
  async run (ctx) {
    return await guarded(ctx, USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      const [sub, arg] = positionals
      if (sub === 'add') {
        if (arg === undefined) throw new UsageError('schema add takes a definition file')
        let definition: unknown
        try {
          definition = JSON.parse(await readFile(arg, 'utf8'))
        } catch (err) {
          throw new HearthError('INVALID_SCHEMA_DEFINITION', `cannot read ${arg} as JSON: ${(err as Error).message}`)
        }
        const result = await callDaemon(ctx, { method: 'POST', path: '/v1/schemas', body: definition })
        if (values.json === true) writeJson(ctx, result)
        else ctx.stdout.write(`${result.added === true ? 'added' : 'already known'}: ${String(result.schema.scope)} → schema ${String(result.schema.id)} (${String(result.schema.definitionUrl)})\n`)
        return EXIT.OK
      }
      if (sub === 'ls') {
        const result = await callDaemon(ctx, { path: '/v1/schemas' })
        if (values.json === true) { writeJson(ctx, result); return EXIT.OK }
        for (const s of result.schemas as Array<Record<string, unknown>>) {
          // whole ids: they are what `schema show` and the chain take (local ids are 60+ characters)
          ctx.stdout.write(`${String(s.scope).padEnd(32)} ${s.latest === true ? 'latest' : '      '}  ${String(s.id)}  ${String(s.name)} ${String(s.version ?? '')}\n`)
        }
        return EXIT.OK
      }
      if (sub === 'show') {
        if (arg === undefined) throw new UsageError('schema show takes a scope or a schema id')
        const path = arg.includes('.') ? `/v1/schemas?scope=${encodeURIComponent(arg)}` : `/v1/schemas/${encodeURIComponent(arg)}`
        writeJson(ctx, await callDaemon(ctx, { path }))
        return EXIT.OK
      }
      throw new UsageError('schema takes add, ls or show')
    })
  }
}
