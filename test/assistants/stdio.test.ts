// `hearth mcp` with the official SDK's Client over stdio (the way Claude Desktop, Cursor and VS Code
// start it), against a real daemon holding an imported ChatGPT export: nothing before the owner's
// approval, then only the granted scopes, every call in the access log, remembered per client
// name, and refused mid-session once revoked; and the relay through a daemon restart.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runCli, startDaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { daemonWithHistory, pendingAssistantRequest, stdioClient, textOf } from '../support/assistants.js'

test('hearth mcp: approval first, then only granted scopes; logged; remembered by name; revoked mid-session', { timeout: 240_000 }, async (t) => {
  const d = await daemonWithHistory(t)
  const first = await stdioClient(t, d, 'Claude Desktop')

  const tools = (await first.listTools()).tools.map((x) => x.name).sort()
  for (const name of ['list_scopes', 'list_versions', 'read_records', 'request_access']) assert.ok(tools.includes(name), tools.join(','))
  const readTool = (await first.listTools()).tools.find((x) => x.name === 'read_records')!
  assert.match(readTool.description ?? '', /Untrusted data/i)

  // before the owner approves: a clear answer, and no data
  const early = await first.callTool({ name: 'list_scopes', arguments: {} })
  assert.equal(early.isError, true)
  const asked = await pendingAssistantRequest(d)
  assert.equal(asked.kind, 'connect')
  assert.match(textOf(early), new RegExp(`ASSISTANT_NOT_APPROVED: waiting for the owner's approval: .*hearth requests approve ${asked.id}`))
  const earlyRead = await first.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations' } })
  assert.equal(earlyRead.isError, true)
  assert.doesNotMatch(textOf(earlyRead), /lease/i)

  const listed = await runCli(d.home, ['requests'])
  assert.equal(listed.code, 0, listed.stderr)
  assert.match(listed.stdout, new RegExp(`^${asked.id} {2}pending {2}assistant Claude Desktop \\(asst_\\w+\\) asks to connect$`, 'm'))
  assert.match(listed.stdout, /it named no scopes: approve with --scope PATTERN/)
  const noScope = await runCli(d.home, ['requests', 'approve', asked.id])
  assert.equal(noScope.code, 2, noScope.stdout)
  assert.match(noScope.stderr, /INVALID_ARGUMENT: this request names no scopes/)
  const approved = await runCli(d.home, ['requests', 'approve', asked.id, '--scope', 'chatgpt.*'])
  assert.equal(approved.code, 0, approved.stderr)
  assert.match(approved.stdout, /^approved: assistant Claude Desktop \(asst_\w+\) may read chatgpt\.\*$/m)

  // the granted scope, labelled, marked untrusted
  const scopes = textOf(await first.callTool({ name: 'list_scopes', arguments: {} }))
  assert.match(scopes, /^UNTRUSTED DATA/)
  assert.match(scopes, /"scope": "chatgpt\.conversations"/)
  assert.match(scopes, /All of your ChatGPT data/)
  assert.doesNotMatch(scopes, /instagram/)

  const versions = textOf(await first.callTool({ name: 'list_versions', arguments: { scope: 'chatgpt.conversations' } }))
  assert.match(versions, /"total": 2/)
  const read = await first.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations', limit: 5 } })
  assert.equal(read.isError, false, textOf(read))
  assert.match(textOf(read), /<<<UNTRUSTED-DATA/)
  assert.match(textOf(read), /sourdough|lease/i)

  // search within the grant: a hit names a record that read_records opens; other scopes never come back
  await waitFor('the export indexed for search', async () => {
    const owner = await d.request({ path: '/v1/search?q=landlord' })
    return owner.json?.hits?.length > 0 && (await d.request({ path: '/v1/search?q=jane' })).json?.hits?.length > 0
  }, 60_000)
  const found = await first.callTool({ name: 'search', arguments: { query: 'landlord' } })
  assert.equal(found.isError, false, textOf(found))
  const hit = JSON.parse(/<<<UNTRUSTED-DATA\n([\s\S]*)\nUNTRUSTED-DATA>>>/.exec(textOf(found))![1]!).hits[0]
  assert.equal(hit.scope, 'chatgpt.conversations')
  assert.match(hit.snippet, /landlord/i)
  const opened = await first.callTool({ name: 'read_records', arguments: { scope: hit.scope, version: hit.version, pointer: hit.pointer } })
  assert.match(textOf(opened), /Can my landlord raise the rent mid-lease\?/)
  const elsewhere = await first.callTool({ name: 'search', arguments: { query: 'jane' } })
  assert.match(textOf(elsewhere), /"hits": \[\]/)

  // outside the grant: refused, with the way to ask
  const refused = await first.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })
  assert.equal(refused.isError, true)
  assert.match(textOf(refused), /^SCOPE_NOT_GRANTED: .*request_access/)
  assert.doesNotMatch(textOf(refused), /jane/)
  const more = await first.callTool({ name: 'request_access', arguments: { scopes: ['instagram.profile'], purpose: 'to greet you by name' } })
  assert.equal(more.isError, false, textOf(more))
  const moreRequest = await pendingAssistantRequest(d)
  assert.equal(moreRequest.kind, 'more-scopes')
  assert.deepEqual(moreRequest.scopes, ['instagram.profile'])
  assert.match((await runCli(d.home, ['requests'])).stdout, /asks to more scopes\n {2}purpose \(the assistant's words\): to greet you by name\n {2}- instagram\.profile: /)

  // every call is in the one access log, under the connection
  const connection = moreRequest.connectionId
  const log = await d.request({ path: `/v1/access-logs?connection=${connection}` })
  const rows = (log.json.entries as Array<{ action: string; status: number; errorCode: string | null; scope: string | null; connection: string }>)
  assert.ok(rows.every((e) => e.connection === connection))
  assert.deepEqual(rows.map((e) => [e.action, e.status, e.errorCode, e.scope]), [
    ['denied', 403, 'ASSISTANT_NOT_APPROVED', null],
    ['denied', 403, 'ASSISTANT_NOT_APPROVED', 'chatgpt.conversations'],
    ['scopes', 200, null, null],
    ['versions', 200, null, 'chatgpt.conversations'],
    ['read', 200, null, 'chatgpt.conversations'],
    ['search', 200, null, null],
    ['read', 200, null, 'chatgpt.conversations'],
    ['search', 200, null, null],
    ['denied', 403, 'SCOPE_NOT_GRANTED', 'instagram.profile'],
    ['request-access', 200, null, null]
  ])
  const cliLog = await runCli(d.home, ['access-log', '--connection', connection])
  assert.match(cliLog.stdout, new RegExp(`read +${connection} {2}chatgpt\\.conversations`))

  // the same client name is remembered: a new process needs no new approval
  await first.close()
  const second = await stdioClient(t, d, 'Claude Desktop')
  assert.equal((await second.callTool({ name: 'list_scopes', arguments: {} })).isError, false)
  const shown = await runCli(d.home, ['assistants'])
  assert.equal(shown.stdout.trim().split('\n').length, 1, shown.stdout)
  assert.match(shown.stdout, new RegExp(`^${connection} {2}active {3}stdio {2}Claude Desktop {2}chatgpt\\.\\* {2}last used 20`, 'm'))

  // revoked while the session is open: the very next call is refused
  const revoked = await runCli(d.home, ['assistants', 'revoke', connection])
  assert.equal(revoked.code, 0, revoked.stderr)
  const after = await second.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations' } })
  assert.equal(after.isError, true)
  assert.match(textOf(after), /^ASSISTANT_REVOKED: /)
  assert.doesNotMatch(textOf(after), /lease|sourdough/i)
})

test('hearth mcp outlives a daemon restart: a clear error while it is down, then a new session for the same connection', { timeout: 240_000 }, async (t) => {
  const d = await startDaemonProcess(t)
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'jane.doe' } })).status, 201)
  const client = await stdioClient(t, d, 'Zed')
  await client.callTool({ name: 'list_scopes', arguments: {} })
  const asked = await pendingAssistantRequest(d)
  assert.equal((await d.request({ method: 'POST', path: `/v1/assistants/requests/${asked.id}/approve`, body: { scopes: ['instagram.*'] } })).status, 200)
  assert.match(textOf(await client.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })), /jane\.doe/)

  await d.stop()
  await assert.rejects(client.callTool({ name: 'list_scopes', arguments: {} }), /DAEMON_NOT_RUNNING: .*start it with `hearth daemon`/)
  const again = await startDaemonProcess(t, { home: d.home.root })
  const read = await client.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })
  assert.equal(read.isError, false, textOf(read))
  assert.match(textOf(read), /jane\.doe/)
  assert.equal((await again.request({ path: '/v1/assistants' })).json.connections.length, 1)
})
