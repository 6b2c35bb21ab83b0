// Chat streams through the proxy: frame by frame, both framings, cancellation, upstream failure.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startHarness, type Harness } from '../support/upstream-proxy-harness.js'
import { openStream, within, eventually } from '../support/upstream-stream-client.js'
import { parseFrame, chunkText, FrameSplitter } from '../../src/proxy/stream-frames.js'

const API = '/api/v0'

async function conversation (h: Harness): Promise<string> {
  const ada = h.sim.state.addCharacter('Ada')
  const created = await h.request('POST', `${API}/conversations`, { characterId: ada.id })
  return created.json.id as string
}

function framesOf (text: string): string[] {
  return new FrameSplitter().push(Buffer.from(text)).map((f) => f.toString('utf8'))
}

test('the first frame reaches the app while the upstream is still streaming', async (t) => {
  const h = await startHarness(t, { sim: { holdStreams: true } })
  const id = await conversation(h)
  const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'tell me a story', mimeType: 'text/plain', allow: ['text/plain'] })
  assert.equal(s.status, 200)
  assert.match(String(s.headers['content-type']), /text\/event-stream/)
  const first = await within(10_000, 'first frame through the proxy', s.next())
  assert.ok(first !== null)
  h.sim.events.push('app:first-frame')
  assert.ok(!h.sim.events.includes('stream:end'), 'the upstream had already finished')
  h.sim.releaseStreams()
  const rest = await s.rest()
  const events = h.sim.events
  assert.ok(events.indexOf('stream:frame:0') < events.indexOf('app:first-frame'))
  assert.ok(events.indexOf('app:first-frame') < events.indexOf('stream:end'))
  const frames = framesOf(first.toString('utf8') + rest)
  const text = frames.map((f) => parseFrame(f)).map((p) => p.kind === 'chunk' ? chunkText(p.chunk) : '').join('')
  assert.equal(text, 'Ada heard you say: tell me a story')
})

for (const framing of ['sse', 'sse-done', 'bare'] as const) {
  test(`stream framing ${framing} passes through byte for byte, frames split across packets rejoined`, async (t) => {
    const h = await startHarness(t, { sim: { streamFraming: framing, splitFrames: true, chunkDelayMs: 2 } })
    const id = await conversation(h)
    const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'one two three', mimeType: 'text/plain' })
    const body = await s.rest()
    const frames = framesOf(body)
    assert.equal(frames.join(''), body, 'the body is whole frames')
    const parsed = frames.map((f) => parseFrame(f))
    if (framing === 'bare') {
      assert.match(String(s.headers['content-type']), /application\/json/)
      assert.ok(frames.every((f) => f.startsWith('{')))
    } else {
      assert.ok(frames.every((f) => f.startsWith('data: ')))
    }
    if (framing === 'sse-done') assert.equal(parsed.at(-1)!.kind, 'done')
    const chunks = parsed.flatMap((p) => p.kind === 'chunk' ? [p.chunk] : [])
    assert.equal(chunks.map(chunkText).join(''), 'Ada heard you say: one two three')
    assert.ok(chunks.slice(0, -1).every((c) => c.choices![0]!.finish_reason === null))
    assert.equal(chunks.at(-1)!.choices![0]!.finish_reason, 'stop')
    assert.equal(chunks.at(-1)!.choices![0]!.delta!.content, '')
    assert.equal(chunks[0]!.object, 'chat.completion.chunk')
  })
}

test('an app that goes away aborts the upstream request', async (t) => {
  const h = await startHarness(t, { sim: { holdStreams: true } })
  const id = await conversation(h)
  const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'long answer please', mimeType: 'text/plain' })
  await within(10_000, 'first frame', s.next())
  s.req.destroy()
  await eventually('the upstream stream aborted', () => h.sim.events.includes('stream:aborted'))
  assert.ok(!h.sim.events.includes('stream:end'))
})

for (const framing of ['sse', 'bare'] as const) {
  test(`an upstream that dies mid-stream ends the app stream with an error frame (${framing})`, async (t) => {
    const h = await startHarness(t, { sim: { streamFraming: framing } })
    const id = await conversation(h)
    await h.sim.setFault({ kind: 'cut', afterFrames: 2, path: '/chat/stream' })
    const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'a b c d e f', mimeType: 'text/plain' })
    const body = await within(10_000, 'end of the app stream', s.rest())
    assert.ok(h.sim.events.includes('stream:cut'))
    const frames = framesOf(body)
    assert.equal(frames.join(''), body, 'no half frame reaches the app')
    assert.equal(frames.length, 3)
    const last = frames.at(-1)!
    if (framing === 'sse') assert.ok(last.startsWith('event: error\ndata: '))
    const parsed = parseFrame(last)
    assert.equal(parsed.kind, 'error')
    assert.equal((parsed as { body: any }).body.error.errorCode, 'UPSTREAM_BAD_RESPONSE')
    assert.equal((parsed as { body: any }).body.error.code, 502)
  })
}

test('an upstream that goes silent mid-stream is ended with a TIMEOUT error frame and aborted', async (t) => {
  const h = await startHarness(t, { sim: { holdStreams: true }, config: { streamIdleTimeoutMs: 150 } })
  const id = await conversation(h)
  const s = await openStream(h.socket, `${API}/conversations/${id}/chat/stream`, { data: 'hello', mimeType: 'text/plain' })
  const body = await within(10_000, 'end of the app stream', s.rest())
  const last = parseFrame(framesOf(body).at(-1)!)
  assert.equal(last.kind, 'error')
  assert.equal((last as { body: any }).body.error.errorCode, 'TIMEOUT')
  await eventually('the upstream stream aborted', () => h.sim.events.includes('stream:aborted'))
})

test('a stream request the upstream refuses answers with its JSON error', async (t) => {
  const h = await startHarness(t)
  const s = await openStream(h.socket, `${API}/conversations/missing/chat/stream`, { data: 'hi', mimeType: 'text/plain' })
  assert.equal(s.status, 404)
  assert.deepEqual(JSON.parse(await s.rest()), { statusCode: 404, name: 'ConversationNotFoundException', message: 'Conversation missing not found' })
})
