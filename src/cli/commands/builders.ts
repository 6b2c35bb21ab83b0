// `hearth builders`, `hearth requests`, `hearth grants`, `hearth access-log`: the owner's side of
// builders (docs/protocol.md §3.8) through the daemon.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'

const BUILDERS_USAGE = `usage: hearth builders [--json]                 builders the owner trusts (local registry, grantee ids)
       hearth builders register <address> --public-key K [--app-url U] [--json]
         registers a builder (a grantee) on the configured chain, and in the local registry`

const REQUESTS_USAGE = `usage: hearth requests [--all] [--json]          pending access requests with the consent labels of each scope
       hearth requests approve <id> [--scope PATTERN]... [--expires-at ISO|unix] [--json]
         signs the grant with the owner's wallet key (EIP-712); --scope narrows what is granted
       hearth requests deny <id>`

const GRANTS_USAGE = `usage: hearth grants [--json]                   grants: scopes, expiry, state, on-chain state, reads so far
       hearth grants revoke <id>                  enforced at once, then revoked on chain`

const LOG_USAGE = `usage: hearth access-log [--builder ADDRESS] [--scope SCOPE] [--since ISO|unix] [--limit N] [--cursor C] [--json]
  every builder read and refusal, newest first (as the dashboard lists them), back to --since;
  a full page ends with the command for the next one (--cursor)`

/** What each grant chain state (README, "Builders") means, printed after it. */
const CHAIN_STATES: Record<string, string> = {
  local: 'no chain: this daemon\'s record only',
  queued: 'waiting to be sent to the chain',
  'on-chain': 'registered on chain',
  'revoke-queued': 'revocation waiting to be sent to the chain',
  'revoked-on-chain': 'revoked on chain',
  never: 'revoked before it was sent: it never goes on chain'
}

function chainState (state: unknown): string {
  const meaning = CHAIN_STATES[String(state)]
  return meaning === undefined ? String(state) : `${String(state)} (${meaning})`
}

function when (unix: number): string {
  return unix === 0 ? 'never' : new Date(unix * 1000).toISOString()
}

function expiresAtArg (raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (/^\d+$/.test(raw)) return Number(raw)
  const ms = Date.parse(raw)
  if (Number.isNaN(ms)) throw new UsageError('--expires-at takes an ISO 8601 time or unix seconds')
  return Math.floor(ms / 1000)
}

export const buildersCommand: Command = {
  name: 'builders',
  usage: BUILDERS_USAGE,
  async run (ctx) {
    return await guarded(ctx, BUILDERS_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { json: { type: 'boolean' }, 'public-key': { type: 'string' }, 'app-url': { type: 'string' } }
      })
      if (positionals[0] === 'register') {
        const address = positionals[1]
        if (address === undefined || values['public-key'] === undefined) throw new UsageError('builders register takes <address> --public-key K')
        const r = await callDaemon(ctx, { method: 'POST', path: '/v1/builders', body: { address, publicKey: values['public-key'], appUrl: values['app-url'] ?? null }, timeoutMs: 180_000 })
        if (values.json === true) writeJson(ctx, r)
        else ctx.stdout.write(`registered ${String(r.address)}${r.granteeId !== null ? ` (grantee ${String(r.granteeId)} on chain)` : ' in the local registry (no chain configured)'}\n`)
        return EXIT.OK
      }
      if (positionals.length > 0) throw new UsageError('builders takes no argument, or register <address>')
      const r = await callDaemon(ctx, { path: '/v1/builders' })
      if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
      if (r.builders.length === 0) ctx.stdout.write('no builders registered\n')
      for (const b of r.builders as Array<Record<string, any>>) {
        ctx.stdout.write(`${String(b.address)}  grantee ${b.granteeId === null ? '-' : String(b.granteeId)}  ${String(b.appUrl ?? '')}\n`)
      }
      return EXIT.OK
    })
  }
}

export const requestsCommand: Command = {
  name: 'requests',
  usage: REQUESTS_USAGE,
  async run (ctx) {
    return await guarded(ctx, REQUESTS_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { json: { type: 'boolean' }, all: { type: 'boolean' }, scope: { type: 'string', multiple: true }, 'expires-at': { type: 'string' } }
      })
      const [sub, id] = positionals
      if (sub === 'approve' || sub === 'deny') {
        if (id === undefined) throw new UsageError(`requests ${sub} takes a request id`)
        const expiresAt = expiresAtArg(values['expires-at'])
        const body = sub === 'approve' ? { ...(values.scope !== undefined ? { scopes: values.scope } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}) } : {}
        const r = await callDaemon(ctx, { method: 'POST', path: `/v1/access-requests/${encodeURIComponent(id)}/${sub}`, body })
        if (values.json === true) writeJson(ctx, r)
        else if (sub === 'approve') ctx.stdout.write(`approved: grant ${String(r.grant.grantId)} for ${String(r.grant.builder)}: ${(r.grant.scopes as string[]).join(', ')}, expires ${when(r.grant.expiresAt)} chain ${chainState(r.grant.chain)}\n`)
        else ctx.stdout.write(`denied ${id}\n`)
        return EXIT.OK
      }
      if (sub !== undefined) throw new UsageError('requests takes approve <id>, deny <id>, or nothing')
      const r = await callDaemon(ctx, { path: `/v1/access-requests?status=${values.all === true ? 'all' : 'pending'}` })
      if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
      if (r.requests.length === 0) ctx.stdout.write(values.all === true ? 'no access requests\n' : 'no pending access requests\n')
      for (const q of r.requests as Array<Record<string, any>>) {
        ctx.stdout.write(`${String(q.id)}  ${String(q.status)}  from ${String(q.builder)}${q.appUrl !== null ? `  ${String(q.appUrl)}` : ''}\n`)
        if (q.purpose !== null) ctx.stdout.write(`  purpose: ${String(q.purpose)}\n`)
        ctx.stdout.write(`  until:   ${when(q.expiresAt)}\n`)
        for (const c of q.consent as Array<Record<string, string>>) ctx.stdout.write(`  - ${c.pattern}: ${c.label} — ${c.description}\n`)
      }
      return EXIT.OK
    })
  }
}

export const grantsCommand: Command = {
  name: 'grants',
  usage: GRANTS_USAGE,
  async run (ctx) {
    return await guarded(ctx, GRANTS_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      const [sub, id] = positionals
      if (sub === 'revoke') {
        if (id === undefined) throw new UsageError('grants revoke takes a grant id')
        const g = await callDaemon(ctx, { method: 'POST', path: `/v1/grants/${encodeURIComponent(id)}/revoke` })
        if (values.json === true) writeJson(ctx, g); else ctx.stdout.write(`revoked ${String(g.grantId)}: the builder's reads are refused from now on; chain ${chainState(g.chain)}\n`)
        return EXIT.OK
      }
      if (sub !== undefined) throw new UsageError('grants takes revoke <id>, or nothing')
      const r = await callDaemon(ctx, { path: '/v1/grants' })
      if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
      if (r.grants.length === 0) ctx.stdout.write('no grants\n')
      for (const g of r.grants as Array<Record<string, any>>) {
        ctx.stdout.write(`${String(g.grantId)}  ${String(g.state).padEnd(7)}  ${String(g.builder)}  ${(g.scopes as string[]).join(',')}  expires ${when(g.expiresAt)}  reads ${String(g.reads)}  chain ${chainState(g.chain)}${g.permissionId !== null ? ` #${String(g.permissionId)}` : ''}${g.chainError !== null ? ` (${String(g.chainError)})` : ''}\n`)
      }
      return EXIT.OK
    })
  }
}

export const accessLogCommand: Command = {
  name: 'access-log',
  usage: LOG_USAGE,
  async run (ctx) {
    return await guarded(ctx, LOG_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { json: { type: 'boolean' }, builder: { type: 'string' }, scope: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } }
      })
      if (positionals.length > 0) throw new UsageError('access-log takes only options')
      const q = new URLSearchParams()
      if (values.builder !== undefined) q.set('builder', values.builder)
      if (values.scope !== undefined) q.set('scope', values.scope)
      if (values.since !== undefined) q.set('since', values.since)
      q.set('limit', values.limit ?? '1000')
      q.set('order', 'desc')
      if (values.cursor !== undefined) q.set('cursor', values.cursor)
      const r = await callDaemon(ctx, { path: `/v1/access-logs?${q.toString()}` })
      if (values.json === true) { writeJson(ctx, r); return EXIT.OK }
      if (r.entries.length === 0) ctx.stdout.write('no entries\n')
      for (const e of r.entries as Array<Record<string, any>>) {
        ctx.stdout.write(`${String(e.at)}  ${String(e.status)} ${String(e.errorCode ?? 'ok').padEnd(22)} ${String(e.action).padEnd(14)} ${String(e.builder ?? '-')}  ${String(e.scope ?? '-')}  grant ${String(e.grantId ?? '-')}  ${String(e.bytes)} B  ${String(e.ip ?? '')}\n`)
      }
      if (r.next !== null) {
        const again = ctx.args.filter((a, i) => a !== '--cursor' && ctx.args[i - 1] !== '--cursor' && !a.startsWith('--cursor=') && a !== '--json')
        ctx.stdout.write(`more (older): hearth access-log ${[...again, '--cursor', String(r.next)].join(' ')}\n`)
      }
      return EXIT.OK
    })
  }
}
