// Pinning services that cannot work are refused at start, with one clear line: the embedded store
// (it serves no blocks to a service), a token file others may read, a missing token.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EXIT } from '../../src/cli/command.js'
import { daemonUntilExit } from '../support/daemon.js'
import { startIpfsDaemon } from '../support/ipfs-daemon.js'
import { tempDir } from '../support/tmp.js'

async function homeWith (t: Parameters<typeof tempDir>[0], service: object): Promise<string> {
  const home = await tempDir(t, 'hearth-home-')
  await writeFile(join(home, 'config.json'), JSON.stringify({ pinning: { services: [{ name: 'offsite', endpoint: 'http://127.0.0.1:9', ...service }] } }))
  return home
}

test('pinning services are refused at start when they cannot work', { timeout: 10 * 60_000 }, async (t) => {
  const secretDir = await tempDir(t)
  const token = join(secretDir, 'token')
  await writeFile(token, 'tok', { mode: 0o600 })
  const embedded = await daemonUntilExit(await homeWith(t, { tokenFile: token }), {})
  assert.equal(embedded.code, EXIT.FAILURE)
  assert.match(embedded.stderr, /^error CONFIG_INVALID: pinning\.services needs storage\.backend "kubo"/)

  const kubo = await startIpfsDaemon(t)
  const env = { HEARTH_STORAGE: 'kubo', HEARTH_KUBO_URL: kubo.apiUrl }
  const open = join(secretDir, 'open-token')
  await writeFile(open, 'tok', { mode: 0o644 })
  const readable = await daemonUntilExit(await homeWith(t, { tokenFile: open }), env)
  assert.equal(readable.code, EXIT.FAILURE)
  assert.match(readable.stderr, /^error CONFIG_INVALID: pinning service offsite: token file .*open-token may be read by others \(mode 644\): chmod 600 it/)
  const missing = await daemonUntilExit(await homeWith(t, { tokenFile: join(secretDir, 'nope') }), env)
  assert.match(missing.stderr, /^error CONFIG_INVALID: pinning service offsite: token file .*nope cannot be read/)
  const badName = await daemonUntilExit(await homeWith(t, { name: 'Not A Name', tokenFile: token }), env)
  assert.equal(badName.code, EXIT.FAILURE)
  assert.match(badName.stderr, /CONFIG_INVALID/)
})
