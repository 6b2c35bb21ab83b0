// A new owner's first hour (issue 25), with the real CLI against a real daemon: `hearth rm` asks
// and says which devices it reaches, a deleted rejected file leaves every list and count (also
// across a restart), and the counts agree with the lists.
import assert from 'node:assert/strict'
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { after, before, describe, it, test } from 'node:test'
import { EXIT } from '../../src/cli/command.js'
import { main } from '../../src/cli/main.js'
import type { HomeLayout } from '../../src/home.js'
import { runCli, startDaemonProcess, testEnv, type DaemonProcess } from '../support/daemon.js'
import { dropFile, envelopeFor, statusOf, waitFor } from '../support/data-files.js'
import { freeLoopbackPort } from '../support/ipfs-daemon.js'

/** The CLI with stdin a terminal on which `typed` is answered. */
async function runAtTerminal (home: HomeLayout, args: string[], typed: string): Promise<{ code: number, stdout: string, stderr: string }> {
  const stdin = Object.assign(new PassThrough(), { isTTY: true })
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let o = ''
  let e = ''
  stdout.on('data', (c: Buffer) => { o += c.toString() })
  stderr.on('data', (c: Buffer) => { e += c.toString() })
  stdin.end(typed)
  const code = await main(['--home', home.root, ...args], { stdout, stderr, stdin, env: { ...testEnv(), HEARTH_HOME: home.root } })
  return { code, stdout: o, stderr: e }
}

const cleanups: Array<() => Promise<void>> = []
const hooks = { after: (fn: () => Promise<void>) => { cleanups.push(fn) } }
after(async () => { for (const fn of cleanups.reverse()) await fn() })

/** A dropped file the shipped instagram.profile schema rejects (username must be a string). */
function brokenProfile (collectedAt: string): string {
  return JSON.stringify(envelopeFor('instagram.profile', { username: 5 }, collectedAt))
}

async function rejectedPaths (d: DaemonProcess): Promise<string[]> {
  return ((await statusOf(d)).rejected as Array<{ path: string }>).map((r) => r.path)
}

describe('a new owner on the CLI', () => {
  let d: DaemonProcess
  before(async () => {
    d = await startDaemonProcess(hooks, { env: { HEARTH_SYNC: 'true', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }, args: ['--set', 'builders.listen="127.0.0.1:0"'] })
  })
  after(async () => { await d.stop() })

  it('rm asks on a terminal naming the other devices, refuses without --yes off a terminal, and says whom the deletion reaches', async () => {
    for (let i = 0; i < 2; i++) {
      assert.equal((await runCli(d.home, ['put', 'github.profile', '-'], JSON.stringify({ login: `u${i}`, id: i + 1, created_at: '2020-01-01T00:00:00Z' }))).code, EXIT.OK)
    }
    const other = '12D3KooWGzBqXyPtBUMcbnbdcb29ExNbXrtbWgpZnSPLsFwcq4ZT'
    assert.equal((await runCli(d.home, ['peers', 'add', `/ip4/127.0.0.1/tcp/${await freeLoopbackPort()}/p2p/${other}`])).code, EXIT.OK)

    const scripted = await runCli(d.home, ['rm', 'github.profile'])
    assert.equal(scripted.code, EXIT.USAGE)
    assert.equal(scripted.stderr, 'error INVALID_ARGUMENT: hearth rm github.profile needs confirmation: run it in a terminal, or add --yes\n')

    const declined = await runAtTerminal(d.home, ['rm', 'github.profile'], 'n\n')
    assert.equal(declined.code, EXIT.FAILURE)
    assert.match(declined.stderr, /^Delete 2 versions of github\.profile on this device and on your 1 other device \(when they next sync with this one\)\? On-chain registrations stay\. \[y\/N\] error CONFLICT: not deleted: github\.profile is unchanged\n$/)
    assert.equal((await d.request({ path: '/v1/data/github.profile/versions' })).json.total, 2)

    const confirmed = await runAtTerminal(d.home, ['rm', 'github.profile'], 'y\n')
    assert.equal(confirmed.code, EXIT.OK, confirmed.stderr)
    assert.equal(confirmed.stdout, 'deleted 2 files of github.profile on this device, unpinned 2\n  your other device known here deletes it when it next syncs with this one\n')
    assert.equal((await d.request({ path: '/v1/data/github.profile/versions' })).json.total, 0)

    assert.equal((await runCli(d.home, ['put', 'github.profile', '-'], JSON.stringify({ login: 'u', id: 9, created_at: '2020-01-01T00:00:00Z' }))).code, EXIT.OK)
    const yes = await runCli(d.home, ['rm', 'github.profile', '--yes', '--json'])
    assert.equal(yes.code, EXIT.OK, yes.stderr)
    assert.deepEqual(JSON.parse(yes.stdout), { scope: 'github.profile', deleted: 1, unpinned: 1, otherDevices: 1, syncEnabled: true })
  })

  it('arguments: Hearth\'s own messages, --home after the command, -v, bad JSON is 2, config set names the command line once', async () => {
    const cases: Array<[string[], string]> = [
      [['versions', 'x.y', '--limit', '-1'], 'error INVALID_ARGUMENT: --limit needs a value; a value starting with "-" is written --limit=<value>\n'],
      [['versions', 'x.y', '--bogus'], 'error INVALID_ARGUMENT: unknown option --bogus\n'],
      [['whoami', 'extra'], 'error INVALID_ARGUMENT: unexpected argument "extra"\n'],
      [['config', 'set', 'api.tcp.port=99999'], 'error CONFIG_INVALID: invalid configuration: api.tcp.port must be <= 65535 (got 99999 from config set)\n'],
      [['config', 'set', 'nope.key=1'], 'error CONFIG_INVALID: nope.key is not a configuration key\n']
    ]
    for (const [args, first] of cases) {
      const r = await runCli(d.home, args)
      assert.ok(r.code === EXIT.USAGE || r.code === EXIT.FAILURE, args.join(' '))
      assert.ok(r.stderr.startsWith(first), `${args.join(' ')}:\n${r.stderr}`)
      assert.doesNotMatch(r.stderr, /ambiguous|XYZ|place it at the end|\n {2}- /, args.join(' '))
    }
    assert.equal((await runCli(d.home, ['versions', 'x.y', '--limit=-1'])).stderr, 'error INVALID_ARGUMENT: limit must be a non-negative integer, got "-1"\n')
    assert.equal((await runCli(d.home, ['put', 'x.y', '-'], '{oops')).code, EXIT.USAGE)

    // --home after the command (runCli puts one first: this one, later, wins)
    const elsewhere = await main(['ls', '--home', d.home.root], { stdout: new PassThrough(), stderr: new PassThrough(), env: { ...testEnv(), HEARTH_HOME: '/nonexistent-hearth-home' } })
    assert.equal(elsewhere, EXIT.OK)
    for (const flag of ['-v', '-V', '--version']) assert.match((await runCli(d.home, [flag])).stdout, /^hearth \d+\.\d+\.\d+\n$/)
  })

  it('access-log lists newest first, as the dashboard does, and a full page names the command for the next', async () => {
    const port = Number(/^builders {2}\S+ {2}\(port (\d+)\)$/m.exec(d.output())![1])
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/data/instagram.profile`)
      assert.equal(res.status, 401)
      await res.arrayBuffer()
      await new Promise((r) => setTimeout(r, 5))
    }
    const all = (await d.request({ path: '/v1/access-logs?order=desc&limit=10' })).json.entries as Array<{ at: string }>
    assert.equal(all.length, 3)
    const first = await runCli(d.home, ['access-log', '--limit', '2'])
    assert.equal(first.code, EXIT.OK, first.stderr)
    const lines = first.stdout.trim().split('\n')
    assert.deepEqual(lines.slice(0, 2).map((l) => l.split(' ')[0]), [all[0]!.at, all[1]!.at].map(String))
    const more = /^more \(older\): hearth (access-log --limit 2 --cursor \S+)$/.exec(lines[2]!)
    assert.ok(more !== null, first.stdout)
    const next = await runCli(d.home, more[1]!.split(' '))
    assert.equal(next.stdout.trim().split('\n').length, 1)
    assert.equal(next.stdout.split(' ')[0], String(all[2]!.at))
  })

  it('a deleted rejected file leaves the rejected list, the counts and the versions; counts agree with the lists', async () => {
    const rel = await dropFile(d.home.data, 'instagram.profile', 'broken.json', brokenProfile('2026-01-21T10:00:00Z'))
    assert.equal((await runCli(d.home, ['put', 'instagram.profile', '-'], '{"username":"alice"}')).code, EXIT.OK)
    await waitFor('the rejection', async () => (await rejectedPaths(d)).includes(rel))
    const listed = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json
    assert.equal(listed.total, 2)
    assert.equal(listed.versions.length, listed.total, 'the total is what is listed')
    assert.deepEqual(listed.versions.map((v: { state: string }) => v.state), ['stored', 'rejected'])
    assert.equal((await statusOf(d)).files.counts.rejected, 1)

    // status: a short summary, what needs attention with its reasons; the counters under --verbose
    const shipped = ((await d.request({ path: '/v1/schemas' })).json.schemas as unknown[]).length
    const summary = await runCli(d.home, ['status'])
    assert.equal(summary.code, EXIT.OK, summary.stderr)
    const labels = summary.stdout.split('\n').filter((l) => /^[a-z]+ +\S/.test(l)).map((l) => l.split(/ +/)[0])
    assert.deepEqual(labels.slice(0, 8), ['owner', 'files', 'storage', 'chain', 'devices', 'upstream', 'schemas', 'dashboard'])
    assert.match(summary.stdout, /^files {6}\d+ files: \d+ stored, 1 rejected$/m)
    assert.match(summary.stdout, new RegExp(`^schemas {4}${shipped} installed \\(${shipped} shipped\\); no remote source`, 'm'))
    assert.match(summary.stdout, /^devices {4}0 of 1 device connected, last sync never$/m)
    assert.match(summary.stdout, /\nneeds attention:\n {2}1 rejected file in the data folder .*\n {4}instagram\.profile\/broken\.json {2}SCHEMA_VALIDATION_FAILED\n {6}- \/username: must be string\n/)
    assert.ok(summary.stdout.split('\n').length < 25, summary.stdout)
    assert.doesNotMatch(summary.stdout, /encryption workers|memory settle|V8 heap/)
    const verbose = await runCli(d.home, ['status', '-v'])
    assert.ok(verbose.stdout.startsWith(summary.stdout.slice(0, summary.stdout.indexOf('\n`hearth status --verbose`'))))
    assert.match(verbose.stdout, /^encryption workers:$/m)
    assert.match(verbose.stdout, /^memory {5}\d+ MB resident/m)

    await unlink(join(d.home.data, rel))
    await waitFor('the rejected file forgotten', async () => !(await rejectedPaths(d)).includes(rel))
    const status = await statusOf(d)
    assert.equal(status.files.counts.rejected, 0)
    const after = (await d.request({ path: '/v1/data/instagram.profile/versions' })).json
    assert.deepEqual([after.total, after.versions.length], [1, 1])
    const ls = await runCli(d.home, ['ls', 'instagram.'])
    assert.match(ls.stdout, /^instagram\.profile +1 /m)
    assert.doesNotMatch((await runCli(d.home, ['status', '--verbose'])).stdout, /broken\.json/)
  })
})

test('a rejected file deleted while the daemon was stopped is gone after the restart', async (t) => {
  const first = await startDaemonProcess(t)
  const rel = await dropFile(first.home.data, 'instagram.profile', 'broken.json', brokenProfile('2026-01-22T10:00:00Z'))
  const kept = await dropFile(first.home.data, 'instagram.profile', 'still-broken.json', brokenProfile('2026-01-23T10:00:00Z'))
  await waitFor('both rejections', async () => (await rejectedPaths(first)).length === 2)
  assert.equal(await first.stop(), 0)
  await unlink(join(first.home.data, rel))
  const second = await startDaemonProcess(t, { home: first.home.root })
  await waitFor('the deleted one forgotten', async () => (await rejectedPaths(second)).length === 1)
  assert.deepEqual(await rejectedPaths(second), [kept])
  const versions = (await second.request({ path: '/v1/data/instagram.profile/versions' })).json
  assert.deepEqual([versions.total, versions.versions.map((v: { path: string }) => v.path)], [1, [kept]])
  assert.equal((await statusOf(second)).files.total, 1)
  await second.stop()
})
