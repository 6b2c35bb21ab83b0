// `hearth mcp` (the stdio relay a local assistant starts) and `hearth assistants` (the owner's
// view of MCP connections: list, show with activity, narrow, revoke). Their requests are listed
// and decided by `hearth requests` with the builders' ones (builders.ts).
import { parseArgs } from 'node:util'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'

const MCP_USAGE = `usage: hearth mcp [--name LABEL]
  an MCP server on stdin/stdout for a local assistant (Claude Desktop, Cursor, VS Code: see the
  README's "Assistants (MCP)"); it relays to the running daemon. The first time a client connects,
  the owner approves it once: \`hearth requests\`, then \`hearth requests approve <id> --scope ...\`.
  --name tells two setups of one client apart (shown with the client's own name)`

const ASSISTANTS_USAGE = `usage: hearth assistants [--json]                    MCP connections: name, state, granted scopes
       hearth assistants show <id> [--json]          one connection, its consent labels and its latest activity
       hearth assistants narrow <id> --scope P...    keep only these patterns (within the grant)
       hearth assistants revoke <id>                 at once: its next tool call is refused`

export const mcpCommand: Command = {
  name: 'mcp',
  usage: MCP_USAGE,
  async run (ctx) {
    return await guarded(ctx, MCP_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { name: { type: 'string' } } })
      if (positionals.length > 0) throw new UsageError('mcp takes only --name')
      const { relayMcp } = await import('../mcp-relay.js')
      return await relayMcp({ socketPath: ctx.home.socket, stdin: ctx.stdin, stdout: ctx.stdout, stderr: ctx.stderr, label: values.name ?? null })
    })
  }
}

function line (c: Record<string, any>): string {
  const scopes = (c.scopes as string[]).length > 0 ? (c.scopes as string[]).join(',') : '-'
  const waiting = c.pendingRequest !== null ? `  waiting: hearth requests approve ${String(c.pendingRequest)}` : ''
  return `${String(c.id)}  ${String(c.status).padEnd(7)}  ${String(c.kind).padEnd(5)}  ${String(c.name)}  ${scopes}  last used ${String(c.lastUsedAt ?? 'never')}${waiting}\n`
}

async function show (ctx: CommandContext, id: string, json: boolean): Promise<number> {
  const c = await callDaemon(ctx, { path: `/v1/assistants/${encodeURIComponent(id)}` })
  if (json) { writeJson(ctx, c); return EXIT.OK }
  ctx.stdout.write(line(c))
  for (const item of c.consent as Array<Record<string, string>>) ctx.stdout.write(`  - ${item.pattern}: ${item.label} — ${item.description}\n`)
  ctx.stdout.write(c.activity.length === 0 ? 'no activity\n' : 'latest activity:\n')
  for (const e of c.activity as Array<Record<string, any>>) {
    ctx.stdout.write(`  ${String(e.at)}  ${String(e.action).padEnd(14)} ${String(e.status)} ${String(e.errorCode ?? 'ok').padEnd(22)} ${String(e.scope ?? '-')}  ${String(e.bytes)} B\n`)
  }
  return EXIT.OK
}

export const assistantsCommand: Command = {
  name: 'assistants',
  usage: ASSISTANTS_USAGE,
  async run (ctx) {
    return await guarded(ctx, ASSISTANTS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, scope: { type: 'string', multiple: true } } })
      const [sub, id] = positionals
      const json = values.json === true
      if (sub === undefined) {
        const r = await callDaemon(ctx, { path: '/v1/assistants' })
        if (json) { writeJson(ctx, r); return EXIT.OK }
        if (r.connections.length === 0) ctx.stdout.write('no assistants yet: see `hearth mcp --help`\n')
        for (const c of r.connections as Array<Record<string, any>>) ctx.stdout.write(line(c))
        return EXIT.OK
      }
      if (id === undefined || positionals.length > 2) throw new UsageError(`assistants ${sub} takes one connection id`)
      if (sub === 'show') return await show(ctx, id, json)
      if (sub === 'revoke' || sub === 'narrow') {
        if (sub === 'narrow' && values.scope === undefined) throw new UsageError('assistants narrow takes --scope PATTERN (one or more)')
        const c = await callDaemon(ctx, { method: 'POST', path: `/v1/assistants/${encodeURIComponent(id)}/${sub}`, body: sub === 'narrow' ? { scopes: values.scope } : {} })
        if (json) writeJson(ctx, c); else ctx.stdout.write(line(c))
        return EXIT.OK
      }
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}`)
    })
  }
}
