import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, readdir, stat, writeFile, mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess, runCli } from '../support/daemon.js'
import { dropFile, envelopeFor, statusOf, waitFor } from '../support/data-files.js'

test('end to end: POST and dropped files are stored, listed, read back, versioned, deleted, and survive a restart', async (t) => {
  const d = await startDaemonProcess(t)
  assert.match(d.output(), /owner\s+0x[0-9a-fA-F]{40}/)
  assert.match(d.output(), /socket\s+.*hearth\.sock/)
  assert.equal((await stat(d.home.socket)).mode & 0o777, 0o600)

  const health = await d.request({ path: '/health' })
  assert.equal(health.status, 200)
  assert.equal(health.json.status, 'ok')

  const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice', bio: 'héllo 🌍' } })
  assert.equal(posted.status, 201, posted.body.toString())
  assert.equal(posted.json.scope, 'instagram.profile')
  assert.equal(posted.json.status, 'stored')
  assert.match(posted.json.url, /^ipfs:\/\/b[a-z2-7]+$/)
  const fileOnDisk = join(d.home.data, posted.json.path)
  const envelopeOnDisk = JSON.parse(await readFile(fileOnDisk, 'utf8'))
  assert.equal(envelopeOnDisk.collectedAt, posted.json.collectedAt)
  assert.deepEqual(envelopeOnDisk.data, { username: 'alice', bio: 'héllo 🌍' })

  // two writes to one scope in the same instant both survive
  const at = '2026-01-21T10:00:00Z'
  const [a, b] = await Promise.all([
    d.request({ method: 'POST', path: `/v1/data/instagram.profile?collectedAt=${at}`, body: { username: 'bob' } }),
    d.request({ method: 'POST', path: `/v1/data/instagram.profile?collectedAt=${at}`, body: { username: 'carol' } })
  ])
  assert.equal(a.status, 201)
  assert.equal(b.status, 201)
  assert.notEqual(a.json.path, b.json.path)
  // the same data at the same collectedAt again is a duplicate, not a new version
  const again = await d.request({ method: 'POST', path: `/v1/data/instagram.profile?collectedAt=${at}`, body: { username: 'bob' } })
  assert.equal(again.status, 200)
  assert.equal(again.json.status, 'duplicate')

  // a connector drops a file
  const rel = await dropFile(d.home.data, 'github.profile', '2026-02-01T08-00-00Z.json',
    JSON.stringify(envelopeFor('github.profile', { login: 'octo', id: 1, created_at: '2020-01-01T00:00:00Z' }, '2026-02-01T08:00:00Z')))
  await waitFor('dropped file stored', async () => {
    const v = await d.request({ path: '/v1/data/github.profile/versions' })
    return v.status === 200 && v.json.versions.some((x: any) => x.path === rel && x.state === 'stored')
  })
  const latestGithub = await d.request({ path: '/v1/data/github.profile' })
  assert.equal(latestGithub.status, 200)
  assert.equal(latestGithub.json.data.login, 'octo')

  const list = await d.request({ path: '/v1/data?scopePrefix=instagram' })
  assert.equal(list.status, 200)
  assert.deepEqual(list.json.scopes.map((s: any) => [s.scope, s.count]), [['instagram.profile', 3]])

  const atOrBefore = await d.request({ path: '/v1/data/instagram.profile?at=2026-01-21T10:00:00.000Z' })
  assert.equal(atOrBefore.status, 200)
  assert.ok(['bob', 'carol'].includes(atOrBefore.json.data.username))
  const tooEarly = await d.request({ path: '/v1/data/instagram.profile?at=2020-01-01T00:00:00Z' })
  assert.equal(tooEarly.status, 404)
  assert.equal(tooEarly.json.error.errorCode, 'NOT_FOUND')

  const versions = await d.request({ path: '/v1/data/instagram.profile/versions' })
  assert.equal(versions.json.total, 3)
  for (const v of versions.json.versions) {
    assert.match(v.url, /^ipfs:\/\//)
    assert.ok(v.schemaId.length > 0)
    assert.equal(v.fileId, null)
    assert.equal(v.state, 'stored')
  }

  // the CLI reads the same through the socket
  const ls = await runCli(d.home, ['ls', '--json'])
  assert.equal(ls.code, 0, ls.stderr)
  assert.deepEqual(JSON.parse(ls.stdout).scopes.map((s: any) => s.scope), ['github.profile', 'instagram.profile'])
  const got = await runCli(d.home, ['get', 'github.profile'])
  assert.equal(got.code, 0, got.stderr)
  assert.equal(JSON.parse(got.stdout).data.login, 'octo')
  const cat = await runCli(d.home, ['storage', 'cat', latestGithub.headers['x-hearth-url']!.toString().slice(7)])
  assert.equal(cat.code, 0, cat.stderr)
  assert.ok(!cat.stdout.includes('octo'), 'stored bytes are ciphertext')

  // restart keeps everything
  assert.equal(await d.stop(), 0)
  const d2 = await startDaemonProcess(t, { home: d.home.root })
  const versions2 = await d2.request({ path: '/v1/data/instagram.profile/versions' })
  assert.deepEqual(versions2.json.versions.map((v: any) => v.url), versions.json.versions.map((v: any) => v.url))
  const latest2 = await d2.request({ path: '/v1/data/github.profile' })
  assert.equal(latest2.json.data.login, 'octo')

  // delete removes files and index entries
  const del = await d2.request({ method: 'DELETE', path: '/v1/data/instagram.profile' })
  assert.equal(del.status, 200)
  assert.equal(del.json.deleted, 3)
  assert.equal((await d2.request({ path: '/v1/data/instagram.profile' })).status, 404)
  const left = await readdir(d2.home.data)
  assert.deepEqual(left.filter((name) => !name.startsWith('.')), ['github.profile'])
  // the hidden folder of unsynced writes' temps holds nothing once they are done but the file
  // writer's empty spares (file-writer-thread.ts)
  if (left.includes('.writing')) {
    for (const name of await readdir(join(d2.home.data, '.writing'))) {
      assert.match(name, /^\.spare\.[0-9a-f]{12}\.tmp$/)
      assert.equal((await stat(join(d2.home.data, '.writing', name))).size, 0, `${name} is empty`)
    }
  }
  assert.equal((await d2.request({ method: 'DELETE', path: '/v1/data/instagram.profile' })).status, 404)
})

test('invalid dropped files are rejected with their reasons and visible in status; fixing them ingests them', async (t) => {
  const d = await startDaemonProcess(t)
  await dropFile(d.home.data, 'instagram.profile', 'bad-json.json', '{ nope')
  await dropFile(d.home.data, 'instagram.profile', 'wrong-scope.json', JSON.stringify(envelopeFor('github.profile', { login: 'x', id: 1, created_at: '2020-01-01T00:00:00Z' }, '2026-01-01T00:00:00Z')))
  await dropFile(d.home.data, 'instagram.profile', 'invalid-data.json', JSON.stringify(envelopeFor('instagram.profile', { username: 42 }, '2026-01-01T00:00:00Z')))
  await dropFile(d.home.data, 'Instagram.Profile', 'x.json', JSON.stringify(envelopeFor('instagram.profile', { username: 'a' }, '2026-01-01T00:00:00Z')))
  await dropFile(d.home.data, 'unknownsource.things', '2026-01-01T00-00-00Z.json', JSON.stringify(envelopeFor('unknownsource.things', { a: 1 }, '2026-01-01T00:00:00Z')))
  await mkdir(join(d.home.data, 'instagram.profile'), { recursive: true })
  await writeFile(join(d.home.data, 'instagram.profile', 'notes.txt'), 'ignored: not json')
  await writeFile(join(d.home.data, 'loose.json'), '{}')
  // a planted link that leads out of the data folder is never followed
  const outside = join(d.home.root, 'secret.json')
  await writeFile(outside, JSON.stringify(envelopeFor('instagram.profile', { username: 'outside' }, '2026-01-01T00:00:00Z')))
  await symlink(outside, join(d.home.data, 'instagram.profile', 'escape.json'))

  const s = await waitFor('rejections', async () => {
    const st = await statusOf(d)
    // the counts and the lists are read side by side, not from one snapshot: a file rejected
    // between the reads shows in one first, so both are waited for
    return st.rejected.length === 5 && st.waiting.length === 1 && st.files.counts.rejected === 5 && st.files.counts['waiting-schema'] === 1 ? st : null
  })
  const byPath = Object.fromEntries(s.rejected.map((r: any) => [r.path, r]))
  assert.equal(byPath['instagram.profile/bad-json.json'].errorCode, 'INVALID_JSON')
  assert.equal(byPath['instagram.profile/wrong-scope.json'].errorCode, 'SCOPE_MISMATCH')
  assert.equal(byPath['instagram.profile/invalid-data.json'].errorCode, 'SCHEMA_VALIDATION_FAILED')
  assert.ok(byPath['instagram.profile/invalid-data.json'].reasons.some((r: string) => r.includes('/username')))
  assert.equal(byPath['Instagram.Profile/x.json'].errorCode, 'INVALID_SCOPE')
  assert.equal(byPath['instagram.profile/escape.json'].errorCode, 'PATH_OUTSIDE_DATA')
  assert.equal(s.waiting[0].scope, 'unknownsource.things')
  assert.equal(s.files.counts.rejected, 5)
  assert.equal(s.files.counts['waiting-schema'], 1)

  const cli = await runCli(d.home, ['status'])
  assert.equal(cli.code, 0)
  assert.match(cli.stdout, /SCHEMA_VALIDATION_FAILED/)

  // the file is left in place; fixing it makes it a stored version
  await writeFile(join(d.home.data, 'instagram.profile', 'invalid-data.json'), JSON.stringify(envelopeFor('instagram.profile', { username: 'fixed' }, '2026-01-01T00:00:00Z')))
  await waitFor('fixed file stored', async () => (await d.request({ path: '/v1/data/instagram.profile' })).json?.data?.username === 'fixed')

  // adding the missing schema makes the waiting file go through on the next retry
  const def = { name: 'Things', version: '1.0.0', scope: 'unknownsource.things', dialect: 'json', schema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } }
  const defFile = join(d.home.root, 'things.json')
  await writeFile(defFile, JSON.stringify(def))
  const added = await runCli(d.home, ['schema', 'add', defFile, '--json'])
  assert.equal(added.code, 0, added.stderr)
  assert.match(JSON.parse(added.stdout).schema.id, /^local:/)
  // touching the file is what a user does; the retry timer would also pick it up
  await writeFile(join(d.home.data, 'unknownsource.things', '2026-01-01T00-00-00Z.json'), JSON.stringify(envelopeFor('unknownsource.things', { a: 1 }, '2026-01-01T00:00:00Z')))
  await waitFor('waiting file stored', async () => (await d.request({ path: '/v1/data/unknownsource.things' })).status === 200)
})

test('a second daemon on the same home refuses to start; a stale lock and socket after SIGKILL do not block', async (t) => {
  const d = await startDaemonProcess(t)
  await assert.rejects(startDaemonProcess(t, { home: d.home.root, timeoutMs: 20_000 }), /DAEMON_LOCKED/)
  await d.kill('SIGKILL')
  await stat(d.home.lock) // left behind by the crash
  const d2 = await startDaemonProcess(t, { home: d.home.root })
  assert.equal((await d2.request({ path: '/health' })).status, 200)
  assert.equal(await d2.stop(), 0)
})

test('the optional TCP listener demands the bearer token', async (t) => {
  const d = await startDaemonProcess(t, { env: { HEARTH_TCP_PORT: '0' }, args: ['--set', 'api.tcp.enabled=true'] })
  const port = Number(/TCP listener on 127\.0\.0\.1:(\d+)/.exec(d.output())![1])
  const token = (await readFile(join(d.home.identity, 'api-token'), 'utf8')).trim()
  const anon = await fetch(`http://127.0.0.1:${port}/health`)
  assert.equal(anon.status, 401)
  assert.equal(((await anon.json()) as { error: { errorCode: string } }).error.errorCode, 'UNAUTHORIZED')
  const wrong = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: 'Bearer nope' } })
  assert.equal(wrong.status, 401)
  const good = await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(good.status, 200)
})
