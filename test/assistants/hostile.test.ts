// Hostile MCP clients on the owner socket's MCP endpoint (what `hearth mcp` relays to): bad JSON,
// deep or huge bodies, big batches, unknown sessions, nameless clients, too many sessions, huge
// tool arguments. Each gets a clear JSON-RPC error and the daemon goes on answering.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startDaemonProcess } from '../support/daemon.js'
import { OWNER_MCP_PATH } from '../../src/assistants/wire.js'

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }

function initialize (name: unknown, id = 1): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } } }
}

test('hostile MCP clients get clear errors, bounded sessions, and the daemon goes on', { timeout: 180_000 }, async (t) => {
  const d = await startDaemonProcess(t, { args: ['--set', 'mcp.maxSessions=2'] })
  const post = async (body: unknown, headers: Record<string, string> = {}) => await d.request({ method: 'POST', path: OWNER_MCP_PATH, body: typeof body === 'string' ? body : JSON.stringify(body), headers: { ...HEADERS, ...headers } })

  assert.equal((await d.request({ path: OWNER_MCP_PATH, headers: HEADERS })).status, 405)
  const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method":')
  assert.deepEqual([notJson.status, notJson.json.error.code], [400, -32700])
  assert.match(notJson.json.error.message, /^INVALID_JSON/)
  const deep = await post('['.repeat(100) + ']'.repeat(100))
  assert.match(deep.json.error.message, /^JSON_TOO_DEEP/)
  const huge = await post({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(100_000) } })
  assert.equal(huge.status, 413)
  const batch = await post(Array.from({ length: 17 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })))
  assert.match(batch.json.error.message, /batch of more than 16/)
  assert.match((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.error.message, /send initialize first/)
  assert.equal((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'not-a-session' })).status, 404)
  for (const name of ['', '\u0000\u200b', 'x'.repeat(200), 42]) {
    const nameless = await post(initialize(name))
    assert.equal(nameless.status, 400, JSON.stringify(nameless.json))
    // not an initialize by the protocol's schema (a number), or one naming no client
    assert.match(nameless.json.error.message, /^(INVALID_ARGUMENT: initialize must name the client|No session: send initialize first)/)
  }

  const sessions: string[] = []
  for (const name of ['one', 'two']) {
    const opened = await post(initialize(name))
    assert.equal(opened.status, 200, JSON.stringify(opened.json))
    sessions.push(opened.headers['mcp-session-id'] as string)
  }
  const third = await post(initialize('three'))
  assert.deepEqual([third.status, /^MCP_SESSION_LIMIT/.test(third.json.error.message)], [503, true])

  // a huge tool argument is refused by the tool's own bounds, not run
  const session = { 'mcp-session-id': sessions[0]!, 'mcp-protocol-version': '2025-06-18' }
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202)
  const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: { query: 'q'.repeat(20_000) } } }, session)
  assert.equal(call.status, 200)
  assert.ok(call.json.error !== undefined || call.json.result?.isError === true, JSON.stringify(call.json).slice(0, 300))
  assert.doesNotMatch(JSON.stringify(call.json), /"hits"/)

  // a closed session frees its place
  assert.equal((await d.request({ method: 'DELETE', path: OWNER_MCP_PATH, headers: { ...HEADERS, ...session } })).status, 200)
  assert.equal((await post(initialize('three'))).status, 200)
  assert.equal((await d.request({ path: '/health' })).json.status, 'ok')
  // the nameless and refused clients left no request; the named ones wait for the owner
  const waiting = (await d.request({ path: '/v1/assistants/requests' })).json.requests.map((r: { connection: { name: string } }) => r.connection.name).sort()
  assert.deepEqual(waiting, ['one', 'three', 'two'])
})
