// Following the README as a new user would: the CLI's answers, exit codes and texts against one
// real daemon (sync on loopback, an upstream that does not answer).
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { EXIT } from '../../src/cli/command.js'
import { HEARTH_VERSION } from '../../src/version.js'
import { startDaemonProcess, runCli, type DaemonProcess } from '../support/daemon.js'
import { waitFor } from '../support/data-files.js'
import { freeLoopbackPort } from '../support/ipfs-daemon.js'

const PKG_VERSION = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version as string

function fakeJwt (expiresInSec: number): string {
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'u1', exp: Math.floor(Date.now() / 1000) + expiresInSec })}.c2lnbmF0dXJl`
}

const cleanups: Array<() => Promise<void>> = []
const hooks = { after: (fn: () => Promise<void>) => { cleanups.push(fn) } }
after(async () => { for (const fn of cleanups.reverse()) await fn() })

describe('a new user on the CLI', () => {
  let d: DaemonProcess
  before(async () => {
    d = await startDaemonProcess(hooks, {
      env: {
        HEARTH_SYNC: 'true',
        HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0',
        HEARTH_UPSTREAM_URL: `http://127.0.0.1:${await freeLoopbackPort()}`
      }
    })
  })
  after(async () => { await d.stop() })

  it('--version prints the package version; /health and the banner carry it', async () => {
    assert.equal(HEARTH_VERSION, PKG_VERSION)
    for (const flag of ['--version', '-V']) {
      const r = await runCli(d.home, [flag])
      assert.equal(r.code, EXIT.OK)
      assert.equal(r.stdout, `hearth ${PKG_VERSION}\n`)
    }
    const health = await d.request({ path: '/health' })
    assert.equal(health.json.version, PKG_VERSION)
    assert.match(d.output(), new RegExp(`^hearth ${PKG_VERSION.replace(/\./g, '\\.')} `, 'm'))
  })

  it('exit codes follow the README: a server-side INVALID_ARGUMENT is 2, versions of an unknown scope 4', async () => {
    const bad = await runCli(d.home, ['get', 'instagram.profile', '--at', 'yesterday'])
    assert.equal(bad.code, EXIT.USAGE, bad.stderr)
    assert.match(bad.stderr, /^error INVALID_ARGUMENT: /)
    const unknown = await runCli(d.home, ['versions', 'nothing.here'])
    assert.equal(unknown.code, EXIT.NOT_FOUND, unknown.stderr)
    assert.match(unknown.stderr, /^error NOT_FOUND: no versions of nothing\.here/)
    const badScope = await runCli(d.home, ['versions', 'Not A Scope'])
    assert.equal(badScope.code, EXIT.USAGE, badScope.stderr)
  })

  it('put of a missing file or of bad JSON names the file (and the line)', async () => {
    const missing = join(d.home.root, 'nope.json')
    const r1 = await runCli(d.home, ['put', 'instagram.profile', missing])
    assert.equal(r1.code, EXIT.USAGE)
    assert.equal(r1.stderr, `error INVALID_ARGUMENT: cannot read ${missing}: no such file\n`)
    const bad = join(d.home.root, 'bad.json')
    await writeFile(bad, '{\n  "username": "alice",\n  "bio": oops\n}\n')
    const r2 = await runCli(d.home, ['put', 'instagram.profile', bad])
    assert.equal(r2.code, EXIT.USAGE)
    assert.match(r2.stderr, new RegExp(`^error INVALID_JSON: ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not JSON: line 3, column 10: `))
    const r3 = await runCli(d.home, ['put', 'instagram.profile', '-'], '{"username": "a",}')
    assert.match(r3.stderr, /^error INVALID_JSON: stdin is not JSON: line 1, column 18: /)
  })

  it('schema ls prints whole schema ids', async () => {
    const r = await runCli(d.home, ['schema', 'ls'])
    assert.equal(r.code, EXIT.OK, r.stderr)
    const listed = (await d.request({ path: '/v1/schemas' })).json.schemas as Array<{ id: string }>
    assert.ok(listed.length >= 10)
    const words = new Set(r.stdout.split(/\s+/))
    for (const s of listed) assert.ok(words.has(s.id), `${s.id} printed whole`)
  })

  it('versions pages with --limit and --offset and says when there is more', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await runCli(d.home, ['put', 'github.profile', '-', '--collected-at', `2026-01-0${i + 1}T00:00:00Z`], JSON.stringify({ login: `u${i}`, id: i + 1, created_at: '2020-01-01T00:00:00Z' }))
      assert.equal(r.code, EXIT.OK, r.stderr)
    }
    const first = await runCli(d.home, ['versions', 'github.profile', '--limit', '2'])
    assert.equal(first.code, EXIT.OK, first.stderr)
    assert.equal(first.stdout.split('\n').filter((l) => l.startsWith('2026-')).length, 2)
    assert.match(first.stdout, /versions 1–2 of 3\nmore: hearth versions github\.profile --offset 2 --limit 2\n$/)
    const rest = await runCli(d.home, ['versions', 'github.profile', '--limit', '2', '--offset', '2'])
    assert.equal(rest.stdout.split('\n').filter((l) => l.startsWith('2026-01-01')).length, 1)
    assert.match(rest.stdout, /versions 3–3 of 3\n$/)
  })

  it('after a stored file is edited in place, get --at its collectedAt returns the new version', async () => {
    const at = '2026-02-01T10:00:00.000Z'
    const put = await runCli(d.home, ['put', 'instagram.profile', '-', '--collected-at', at, '--json'], '{"username":"before"}')
    assert.equal(put.code, EXIT.OK, put.stderr)
    const file = join(d.home.data, JSON.parse(put.stdout).path)
    const envelope = JSON.parse(await readFile(file, 'utf8'))
    envelope.data.username = 'after'
    await writeFile(file, JSON.stringify(envelope))
    // the old version is archived in the batch of the new one, so two stored versions mean done
    await waitFor('the edit ingested', async () => {
      const v = await d.request({ path: '/v1/data/instagram.profile/versions' })
      return v.json.versions.filter((x: { collectedAt: string, state: string }) => x.collectedAt === at && x.state === 'stored').length === 2
    })
    for (const args of [['--at', at], []]) {
      const got = await runCli(d.home, ['get', 'instagram.profile', ...args])
      assert.equal(got.code, EXIT.OK, got.stderr)
      assert.equal(JSON.parse(got.stdout).data.username, 'after', `get ${args.join(' ')}`)
    }
  })

  it('peers add refuses an address without a peer id; peers rm forgets a device', async () => {
    const noId = await runCli(d.home, ['peers', 'add', '/ip4/127.0.0.1/tcp/4011'])
    assert.equal(noId.code, EXIT.USAGE)
    assert.match(noId.stderr, /has no peer id/)
    const direct = await d.request({ method: 'POST', path: '/v1/peers', body: { multiaddr: '/ip4/127.0.0.1/tcp/4011' } })
    assert.equal(direct.status, 400)
    assert.equal(direct.json.error.errorCode, 'INVALID_ARGUMENT')

    const other = '12D3KooWGzBqXyPtBUMcbnbdcb29ExNbXrtbWgpZnSPLsFwcq4ZT'
    const address = `/ip4/127.0.0.1/tcp/${await freeLoopbackPort()}/p2p/${other}`
    const added = await runCli(d.home, ['peers', 'add', address])
    assert.equal(added.code, EXIT.OK, added.stderr)
    assert.match((await runCli(d.home, ['peers'])).stdout, new RegExp(other))
    const removed = await runCli(d.home, ['peers', 'rm', other])
    assert.equal(removed.code, EXIT.OK, removed.stderr)
    assert.equal(removed.stdout, `removed ${other} (${address})\n`)
    assert.doesNotMatch((await runCli(d.home, ['peers'])).stdout, new RegExp(other))
    const again = await runCli(d.home, ['peers', 'rm', other])
    assert.equal(again.code, EXIT.NOT_FOUND)
  })

  it('chat with empty stdin says so', async () => {
    const r = await runCli(d.home, ['chat', 'c-123'], '')
    assert.equal(r.code, EXIT.USAGE)
    assert.match(r.stderr, /^nothing sent: stdin was empty/)
  })

  it('image --wait with the service unreachable says it is queued and returns', async () => {
    const login = await runCli(d.home, ['login', '--token', '-'], fakeJwt(3600))
    assert.equal(login.code, EXIT.OK, login.stderr)
    const r = await runCli(d.home, ['image', 'a lighthouse', '--wait', '--poll-ms', '50'])
    assert.equal(r.code, EXIT.OK, r.stderr)
    assert.match(r.stdout, /^job local-[0-9a-f-]+ queued: the image service is not reachable/)
  })

  it('status prints readable text, not JSON fragments', async () => {
    const r = await runCli(d.home, ['status', '--verbose'])
    assert.equal(r.code, EXIT.OK, r.stderr)
    assert.match(r.stdout, /^owner {6}0x[0-9a-fA-F]{40}\n/)
    assert.match(r.stdout, /^sync {7}peer 12D3Koo\S+, \d+ of \d+ device\(s\) connected$/m)
    for (const line of r.stdout.split('\n')) assert.doesNotMatch(line, /[{}]|":/, `readable: ${line}`)
  })
})
