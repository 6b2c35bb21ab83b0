// The proxy's CLI commands against the proxy on a real unix socket.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PassThrough, Readable } from 'node:stream'
import { access } from 'node:fs/promises'
import { startHarness, type Harness } from '../support/upstream-proxy-harness.js'
import { eventually, within } from '../support/upstream-stream-client.js'
import { homeLayout } from '../../src/home.js'
import { tempDir } from '../support/tmp.js'
import { EXIT, type Command, type CommandContext } from '../../src/cli/command.js'
import { chatCommand, conversationsCommand, imageCommand, imagesCommand, loginCommand } from '../../src/cli/commands/proxy.js'

interface Run { code: Promise<number>, out: () => string, err: () => string, stdin: PassThrough }

function collect (): { stream: PassThrough, text: () => string } {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (c: Buffer) => { text += c.toString('utf8') })
  return { stream, text: () => text }
}

function start (h: Pick<Harness, 'home'>, command: Command, args: string[], stdin: NodeJS.ReadableStream = Readable.from([])): Run {
  const out = collect()
  const err = collect()
  const input = stdin instanceof PassThrough ? stdin : new PassThrough()
  if (!(stdin instanceof PassThrough)) stdin.pipe(input)
  const ctx: CommandContext = { home: h.home, args, stdout: out.stream, stderr: err.stream, stdin: input, env: {} }
  return { code: command.run(ctx), out: out.text, err: err.text, stdin: input }
}

async function run (h: Pick<Harness, 'home'>, command: Command, args: string[], stdinText?: string): Promise<{ code: number, out: string, err: string }> {
  const r = start(h, command, args, Readable.from(stdinText === undefined ? [] : [stdinText]))
  const code = await r.code
  return { code, out: r.out(), err: r.err() }
}

test('hearth login --email asks for the code and stores the token; --token - and --logout', async (t) => {
  const h = await startHarness(t, { token: 'none' })
  const stdin = new PassThrough()
  const r = start(h, loginCommand, ['--email', 'me@example.org'], stdin)
  await eventually('the code prompt', () => r.err().includes('code: '))
  stdin.end(`${h.sim.state.loginCodes.get('me@example.org')!}\n`)
  assert.equal(await r.code, EXIT.OK, r.err())
  assert.match(r.out(), /^logged in as me@example\.org \(expires \d{4}-/)
  assert.equal((await h.proxy.status()).auth.present, true)

  assert.equal((await run(h, loginCommand, ['--logout'])).code, EXIT.OK)
  assert.equal((await h.proxy.status()).auth.present, false)

  const pasted = await run(h, loginCommand, ['--token', '-'], `${h.sim.issueToken()}\n`)
  assert.equal(pasted.code, EXIT.OK, pasted.err)
  assert.ok(!pasted.out.includes('eyJ'))
  assert.equal((await h.request('GET', '/api/v0/accounts/me')).status, 200)

  const inArgv = await run(h, loginCommand, ['--token', 'abc.def.ghi'])
  assert.equal(inArgv.code, EXIT.USAGE)
  assert.match(inArgv.err, /shell history/)
  assert.equal((await run(h, loginCommand, [])).code, EXIT.USAGE)
})

test('hearth chat --character streams each reply, /clear empties the conversation', async (t) => {
  const h = await startHarness(t)
  const ada = h.sim.state.addCharacter('Ada')
  const r = await run(h, chatCommand, ['--character', ada.id], 'hello there\n/clear\nbye\n')
  assert.equal(r.code, EXIT.OK, r.err)
  assert.equal(r.out, 'Ada heard you say: hello there\nAda heard you say: bye\n')
  assert.match(r.err, /^conversation [0-9a-f-]{36}\n/)
  const conv = [...h.sim.state.conversations.values()][0]!
  assert.deepEqual(conv.messages.map((m) => m.content), ['bye', 'Ada heard you say: bye'])
})

test('hearth chat prints the reply as it arrives, before the upstream has finished', async (t) => {
  const h = await startHarness(t, { sim: { holdStreams: true } })
  const ada = h.sim.state.addCharacter('Ada')
  const id = (await h.request('POST', '/api/v0/conversations', { characterId: ada.id })).json.id as string
  const stdin = new PassThrough()
  const r = start(h, chatCommand, [id], stdin)
  stdin.write('stream please\n')
  await within(10_000, 'the first words printed', eventually('first words', () => r.out().startsWith('Ada ')))
  assert.ok(!h.sim.events.includes('stream:end'))
  h.sim.releaseStreams()
  stdin.end()
  assert.equal(await r.code, EXIT.OK)
  assert.equal(r.out(), 'Ada heard you say: stream please\n')
})

test('hearth conversations lists, shows messages, --json, and works offline from the cache', async (t) => {
  const h = await startHarness(t)
  const ada = h.sim.state.addCharacter('Ada')
  const id = (await h.request('POST', '/api/v0/conversations', { characterId: ada.id })).json.id as string
  await h.request('POST', `/api/v0/conversations/${id}/chat`, { data: 'hi', mimeType: 'text/plain' })

  const list = await run(h, conversationsCommand, [])
  assert.equal(list.code, EXIT.OK)
  assert.match(list.out, new RegExp(`^${id}  Ada`))
  const json = await run(h, conversationsCommand, ['--json'])
  assert.equal(JSON.parse(json.out).conversations[0].id, id)
  const detail = await run(h, conversationsCommand, [id])
  assert.equal(detail.out, 'you: hi\ncharacter: Ada heard you say: hi\n')

  await h.sim.setFault({ kind: 'down' })
  const offline = await run(h, conversationsCommand, [id])
  assert.equal(offline.code, EXIT.OK)
  assert.equal(offline.out, detail.out)
  assert.match(offline.err, /^offline: cached answer from \d{4}-/)
  const missing = await run(h, conversationsCommand, ['never-seen'])
  assert.equal(missing.code, EXIT.FAILURE)
  assert.match(missing.err, /^error UPSTREAM_UNAVAILABLE/)
  await h.sim.setFault(null)
  const notFound = await run(h, conversationsCommand, ['nope'])
  assert.equal(notFound.code, EXIT.NOT_FOUND)
  assert.match(notFound.err, /Conversation nope not found/)
})

test('hearth image --wait shows progress and prints the local files; offline it is queued', async (t) => {
  const h = await startHarness(t, { sim: { jobInProgressAfterMs: 30, jobDoneAfterMs: 90 } })
  const r = await run(h, imageCommand, ['a red fox', '--wait', '--samples', '2', '--poll-ms', '20'])
  assert.equal(r.code, EXIT.OK, r.err)
  const paths = r.out.trim().split('\n')
  assert.equal(paths.length, 2)
  for (const p of paths) { assert.ok(p.startsWith(h.home.images)); await access(p) }
  assert.match(r.err, /^job [0-9a-f-]{36}\n/)
  assert.match(r.err, /done SUCCESS/)

  const list = await run(h, imagesCommand, [])
  assert.match(list.out, /  done +"a red fox"\n  \//)

  await h.sim.setFault({ kind: 'down' })
  const queued = await run(h, imageCommand, ['offline fox'])
  assert.equal(queued.code, EXIT.OK)
  assert.match(queued.out, /^job local-[0-9a-f-]{36} \(queued until the service is reachable\)\n$/)

  const failed = await run(h, imageCommand, ['x', '--width', 'wide'])
  assert.equal(failed.code, EXIT.USAGE)
})

test('the commands say when the daemon is not running', async (t) => {
  const home = homeLayout(await tempDir(t))
  for (const [command, args] of [[conversationsCommand, []], [imageCommand, ['x']], [loginCommand, ['--token', '-']], [chatCommand, ['c1']]] as const) {
    const r = await run({ home }, command, [...args], 'line\n')
    assert.equal(r.code, EXIT.NOT_RUNNING, `${command.name}: ${r.err}`)
    assert.match(r.err, /DAEMON_NOT_RUNNING/)
  }
})
