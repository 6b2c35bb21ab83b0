// Files an attacker (or an accident) can drop into data/: FIFOs behind symlinks, a huge sparse
// file, plaintext temps left by a killed daemon. None may hang, bloat or outlive a start.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, open, readdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startDaemonProcess } from '../support/daemon.js'
import { statusOf, waitFor } from '../support/data-files.js'
import { tempDir } from '../support/tmp.js'

test('symlinks to FIFOs, a 1 GB sparse file and stale temps in data/ at start: the API answers, each is rejected with its code, temps are removed', async (t) => {
  const root = await tempDir(t, 'hearth-home-')
  const scopeDir = join(root, 'data', 'instagram.profile')
  await mkdir(scopeDir, { recursive: true })
  // more FIFOs than libuv has threads: reading them blocking would stall every file operation
  for (let i = 0; i < 6; i++) {
    execFileSync('mkfifo', [join(scopeDir, `.pipe${i}`)])
    await symlink(`.pipe${i}`, join(scopeDir, `pipe${i}.json`))
  }
  const fh = await open(join(scopeDir, 'huge.json'), 'w')
  await fh.truncate(1024 ** 3)
  await fh.close()
  await writeFile(join(scopeDir, '.2026-01-01T00-00-00.000Z.json.0123456789ab.tmp'), '{"secret":"plaintext"}')

  const d = await startDaemonProcess(t, { home: root, env: { HEARTH_LOG_LEVEL: 'info' } })
  assert.deepEqual((await readdir(scopeDir)).filter((n) => n.endsWith('.tmp')), [])
  const s = await waitFor('rejections', async () => {
    const st = await statusOf(d)
    return st.rejected.length === 7 ? st : null
  }, 20_000)
  const codes = Object.fromEntries(s.rejected.map((r: any) => [r.path, r.errorCode]))
  for (let i = 0; i < 6; i++) assert.equal(codes[`instagram.profile/pipe${i}.json`], 'FILE_UNREADABLE')
  assert.equal(codes['instagram.profile/huge.json'], 'FILE_TOO_LARGE')
  const health = await d.request({ path: '/health' })
  assert.equal(health.status, 200)
  const posted = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'alice' } })
  assert.equal(posted.status, 201, posted.body.toString())
  assert.match(d.output(), /removed temp files of writes a previous run did not finish/)
  // the limit is configurable
  await d.stop()
  const small = await startDaemonProcess(t, { home: root, args: ['--set', 'ingest.maxFileBytes=10'] })
  await writeFile(join(scopeDir, 'small.json'), JSON.stringify({ $schema: 'x', version: '1.0', scope: 'instagram.profile', collectedAt: '2026-01-01T00:00:00Z', data: { username: 'b' } }))
  await waitFor('small file rejected', async () => (await statusOf(small)).rejected.some((r: any) => r.path === 'instagram.profile/small.json' && r.errorCode === 'FILE_TOO_LARGE'))
})
