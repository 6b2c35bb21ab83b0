// Replays on the builder listener (issue 24, items 1 and 2): a signature works once, whatever its
// encoding, for as long as it could be accepted at all.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startBuilderDaemon } from '../support/builder-daemon.js'
import type { BuilderResponse } from '../support/builder-client.js'

function refusedAs (r: BuilderResponse, status: number, code: string): void {
  assert.equal(r.status, status, JSON.stringify(r.json))
  assert.equal(r.json?.error?.errorCode, code, JSON.stringify(r.json))
}

/** The same signature with its recovery byte written the other way (27/28 ↔ 0/1). */
function otherV (header: string): string {
  const v = Number.parseInt(header.slice(-2), 16)
  const alt = v >= 27 ? v - 27 : v + 27
  return header.slice(0, -2) + alt.toString(16).padStart(2, '0')
}

test('a replayed signature is refused however its v byte is written (27/28 or 0/1)', async (t) => {
  const rig = await startBuilderDaemon(t)
  const builder = await rig.registered()
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  assert.equal(asked.status, 201, JSON.stringify(asked.json))
  const path = `/v1/access-requests/${String(asked.json.id)}`
  for (let i = 0; i < 2; i++) {
    const header = await builder.header({ path })
    assert.equal((await builder.send('GET', path, undefined, header)).status, 200)
    refusedAs(await builder.send('GET', path, undefined, header), 401, 'SIGNATURE_REPLAYED')
    refusedAs(await builder.send('GET', path, undefined, otherV(header)), 401, 'SIGNATURE_REPLAYED')
    // and the other way round: first served in the 0/1 form, then replayed in the 27/28 form
    const fresh = otherV(await builder.header({ path }))
    assert.equal((await builder.send('GET', path, undefined, fresh)).status, 200)
    refusedAs(await builder.send('GET', path, undefined, otherV(fresh)), 401, 'SIGNATURE_REPLAYED')
  }
  assert.equal(await rig.daemon.stop(), 0)
})

test('a signature accepted at the edge of its window is remembered for as long as it can be accepted', async (t) => {
  const rig = await startBuilderDaemon(t)
  const builder = await rig.registered()
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'] } })
  const path = `/v1/access-requests/${String(asked.json.id)}`
  // accepted now (exp ≥ now − 60 s), with a few seconds of room for a loaded machine
  const now = Math.floor(Date.now() / 1000)
  const exp = now - 55
  const header = await builder.header({ path, sign: { iat: exp - 120, exp } })
  assert.equal((await builder.send('GET', path, undefined, header)).status, 200)
  // just past exp + 60 s: the clock-skew allowance still accepts the signature until exp + 61 s
  const at = (exp + 60) * 1000 + 250
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())))
  const again = await builder.send('GET', path, undefined, header)
  assert.notEqual(again.status, 200, 'the replay is served again')
  assert.ok(['SIGNATURE_REPLAYED', 'SIGNATURE_EXPIRED'].includes(again.json?.error?.errorCode), JSON.stringify(again.json))
  assert.equal(await rig.daemon.stop(), 0)
})
