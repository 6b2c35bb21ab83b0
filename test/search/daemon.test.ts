// The search through the real daemon (child process, real socket, real ingest and storage): a
// version posted is found at its record, an edit in place and a deleted scope leave the answers,
// the connector's declaration narrows the fields, and a damaged index file is built again.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess, type DaemonProcess } from '../support/daemon.js'

const TIMEOUT = { timeout: 180_000 }

async function post (d: DaemonProcess, scope: string, collectedAt: string, data: unknown): Promise<void> {
  const res = await d.request({ method: 'POST', path: `/v1/data/${scope}?collectedAt=${encodeURIComponent(collectedAt)}`, body: data })
  assert.ok(res.status === 201 || res.status === 200, `${res.status} ${res.body.toString()}`)
}

async function search (d: DaemonProcess, query: Record<string, string>): Promise<any> {
  const res = await d.request({ path: `/v1/search?${new URLSearchParams(query).toString()}` })
  assert.equal(res.status, 200, res.body.toString())
  return res.json
}

/** Asks until the answer is complete and `check` holds (a new version is indexed in the background). */
async function searchUntil (d: DaemonProcess, query: Record<string, string>, check: (answer: any) => boolean): Promise<any> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const answer = await search(d, query)
    if (answer.complete === true && check(answer)) return answer
    if (Date.now() > deadline) assert.fail(`no such answer in time: ${JSON.stringify(answer)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function conversation (id: string, title: string, texts: string[]): Record<string, unknown> {
  return {
    id, title, createdAt: '2024-03-01T10:00:00Z', updatedAt: '2024-03-01T11:00:00Z',
    messages: texts.map((text, i) => ({ id: `${id}-${i}`, role: i % 2 === 0 ? 'user' : 'assistant', text, contentType: 'text', createdAt: `2024-03-01T10:0${i}:00Z` }))
  }
}

test('a posted version is found at its record; an edit in place and a deleted scope leave the answers', TIMEOUT, async (t) => {
  const d = await startDaemonProcess(t)
  await post(d, 'chatgpt.conversations', '2024-03-01T11:00:00Z', conversation('c1', 'Flat hunting', ['what should the lease say about the deposit', 'A lease usually names the deposit and when it is returned', 'thanks']))
  await post(d, 'spotify.streamingHistory', '2024-03-31T23:00:00Z', { month: '2024-03', plays: [{ endedAt: '2024-03-02T08:00:00Z', msPlayed: 200000, kind: 'track', track: 'Feeling Good', artist: 'Nina Simone', album: 'I Put a Spell on You' }] })

  const lease = await searchUntil(d, { q: 'lease deposit' }, (a) => a.hits.length === 2)
  assert.deepEqual(lease.hits.map((h: any) => h.pointer).sort(), ['/messages/0', '/messages/1'])
  const hit = lease.hits[0]
  assert.equal(hit.scope, 'chatgpt.conversations')
  assert.equal(hit.path, 'chatgpt.conversations/2024-03-01T11-00-00Z.json')
  assert.equal(hit.collectedAt, '2024-03-01T11:00:00Z')
  assert.equal(hit.field, 'text')
  assert.match(hit.at, /^2024-03-01T10:0[01]:00Z$/)
  assert.ok(hit.marks.length >= 2, JSON.stringify(hit))
  for (const [a, b] of hit.marks) assert.match(hit.snippet.slice(a, b), /^(lease|deposit)$/i)
  assert.equal(lease.pending, 0)

  const nina = await searchUntil(d, { q: 'nina', scope: 'spotify.*' }, (a) => a.hits.length === 1)
  assert.equal(nina.hits[0].pointer, '/plays/0')
  assert.equal(nina.hits[0].field, 'artist')
  assert.equal((await search(d, { q: 'nina', scope: 'chatgpt.*' })).hits.length, 0)
  assert.equal((await search(d, { q: 'nina', since: '2024-04-01' })).hits.length, 0)
  assert.equal((await search(d, { q: 'nina', since: '2024-03-01', until: '2024-03-03' })).hits.length, 1)
  assert.equal((await search(d, { q: 'sim*' })).hits.length, 1, 'a prefix query')
  assert.equal((await search(d, { q: '"deposit and when"' })).hits.length, 1, 'a phrase query')

  // the owner edits the file in data/: the edited version replaces the old one in the answers
  const file = join(d.home.data, hit.path)
  const envelope = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, JSON.stringify({ ...envelope, data: conversation('c1', 'Flat hunting', ['the garden needs water']) }))
  await searchUntil(d, { q: 'lease' }, (a) => a.hits.length === 0)
  await searchUntil(d, { q: 'garden' }, (a) => a.hits.length === 1)

  // a file removed from data/ is still a stored version (read back from its ciphertext), as
  // GET /v1/data shows it: still found, and the hit opens it
  await post(d, 'chatgpt.conversations', '2024-05-01T11:00:00Z', conversation('c2', 'Pasta', ['a recipe for bread']))
  const bread = await searchUntil(d, { q: 'bread' }, (a) => a.hits.length === 1)
  await unlink(join(d.home.data, bread.hits[0].path))
  await new Promise((resolve) => setTimeout(resolve, 1500))
  assert.equal((await search(d, { q: 'bread' })).hits.length, 1)
  const opened = await d.request({ path: `/v1/data/chatgpt.conversations?at=${encodeURIComponent(bread.hits[0].collectedAt)}` })
  assert.equal(opened.status, 200)
  assert.equal(opened.json.data.messages[0].text, 'a recipe for bread')

  const deleted = await d.request({ method: 'DELETE', path: '/v1/data/chatgpt.conversations' })
  assert.equal(deleted.status, 200, deleted.body.toString())
  await searchUntil(d, { q: 'garden' }, (a) => a.hits.length === 0)
  assert.equal((await search(d, { q: 'nina' })).hits.length, 1, 'other scopes stay')
})

test('the daemon survives a damaged index file: it is built again at start', TIMEOUT, async (t) => {
  const d = await startDaemonProcess(t)
  await post(d, 'spotify.streamingHistory', '2024-03-31T23:00:00Z', { month: '2024-03', plays: [{ endedAt: '2024-03-02T08:00:00Z', msPlayed: 200000, kind: 'track', track: 'Feeling Good', artist: 'Nina Simone', album: 'Pastel Blues' }] })
  await searchUntil(d, { q: 'pastel' }, (a) => a.hits.length === 1)
  assert.equal(await d.stop(), 0)
  await writeFile(join(d.home.search, 'search.db'), Buffer.alloc(8192, 7))
  const again = await startDaemonProcess(t, { home: d.home.root })
  await searchUntil(again, { q: 'pastel' }, (a) => a.hits.length === 1)
})
