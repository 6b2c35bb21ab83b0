// `hearth mcp`: a local assistant (Claude Desktop, Cursor, VS Code) starts this process and talks
// MCP over its stdin/stdout; each JSON-RPC message is POSTed to the daemon's MCP endpoint over the
// owner's socket and the answer written back. The daemon holds the one MCP implementation; this
// only relays, keeps the session id, and opens a new session when the daemon restarted (the
// client's `initialize` is sent again). Messages go one after another, in the order they came.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { daemonRequest, type DaemonResponse } from '../client/daemon-client.js'
import { HearthError } from '../errors.js'
import { LABEL_HEADER, OWNER_MCP_PATH } from '../assistants/wire.js'

export interface RelayOptions {
  socketPath: string
  stdin: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  /** `--name`: shown with the client's own name. */
  label: string | null
}

type Message = JSONRPCMessage & { id?: string | number; method?: string; result?: { protocolVersion?: unknown } }

export async function relayMcp (opts: RelayOptions): Promise<number> {
  const transport = new StdioServerTransport(opts.stdin as NodeJS.ReadStream, opts.stdout as NodeJS.WriteStream)
  let sessionId: string | null = null
  let protocolVersion: string | null = null
  let initialize: Message | null = null
  let queue: Promise<void> = Promise.resolve()

  function headers (): Record<string, string> {
    return {
      accept: 'application/json, text/event-stream',
      ...(sessionId !== null ? { 'mcp-session-id': sessionId } : {}),
      ...(protocolVersion !== null ? { 'mcp-protocol-version': protocolVersion } : {}),
      ...(opts.label !== null ? { [LABEL_HEADER]: encodeURIComponent(opts.label) } : {})
    }
  }

  async function post (message: Message): Promise<DaemonResponse> {
    const res = await daemonRequest(opts.socketPath, { method: 'POST', path: OWNER_MCP_PATH, body: message, headers: headers(), timeoutMs: 120_000 })
    const id = res.headers['mcp-session-id']
    if (typeof id === 'string') sessionId = id
    return res
  }

  /** A new session for the daemon's restart: the client's own `initialize` again, then `initialized`. */
  async function reopen (): Promise<void> {
    sessionId = null
    if (initialize === null) return
    await post(initialize)
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' } as Message)
  }

  async function answer (message: Message, res: DaemonResponse): Promise<void> {
    if (res.status === 202 || res.body.length === 0) return
    const body = res.json as Message | Message[] | undefined
    if (body === undefined) throw new HearthError('INTERNAL', `the daemon answered ${res.status} without JSON`)
    for (const m of Array.isArray(body) ? body : [body]) {
      // an error the daemon gave before reading the message (id null) belongs to this request
      const out = (m.id === null || m.id === undefined) && 'error' in m && message.id !== undefined ? { ...m, id: message.id } : m
      if (message.method === 'initialize' && typeof out.result?.protocolVersion === 'string') protocolVersion = out.result.protocolVersion
      await transport.send(out as JSONRPCMessage)
    }
  }

  async function forward (message: Message): Promise<void> {
    try {
      if (message.method === 'initialize') { initialize = message; sessionId = null }
      let res = await post(message)
      if (res.status === 404 && initialize !== null && message.method !== 'initialize') {
        await reopen()
        res = await post(message)
      }
      await answer(message, res)
    } catch (err) {
      const e = err instanceof HearthError ? err : new HearthError('INTERNAL', (err as Error).message)
      opts.stderr.write(`hearth mcp: ${e.code}: ${e.message}\n`)
      const hint = e.code === 'DAEMON_NOT_RUNNING' ? ' (start it with `hearth daemon`)' : ''
      if (message.id !== undefined) await transport.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `${e.code}: ${e.message}${hint}` } } as JSONRPCMessage)
    }
  }

  transport.onmessage = (message) => { queue = queue.then(async () => { await forward(message as Message) }) }
  transport.onerror = (err) => { opts.stderr.write(`hearth mcp: ${err.message}\n`) }
  await transport.start()
  await new Promise<void>((resolve) => { opts.stdin.once('end', resolve); opts.stdin.once('close', resolve) })
  await queue
  if (sessionId !== null) await daemonRequest(opts.socketPath, { method: 'DELETE', path: OWNER_MCP_PATH, headers: headers(), timeoutMs: 5_000 }).catch(() => undefined)
  await transport.close()
  return 0
}
