// The check for lost blocks on its own: with a gate (the daemon opens it once every part is up)
// its first pass waits for the gate, so a large home's check does not slow the start; a check
// stopped before the gate opens never reads the index.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createPresenceCheck, type StoredRef } from '../../src/storage/presence-check.js'
import { silentLogger } from '../../src/log.js'

const REFS: StoredRef[] = [{ path: 'a.profile/1.json', cid: 'bafy-present' }, { path: 'a.profile/2.json', cid: 'bafy-lost' }]

function rig (backgroundAfter?: Promise<void>): { check: ReturnType<typeof createPresenceCheck>; pages: () => number } {
  let pages = 0
  const check = createPresenceCheck({
    page: async () => { pages++; return { refs: REFS, last: null } },
    present: async (cid) => cid === 'bafy-present',
    logger: silentLogger(),
    ...(backgroundAfter !== undefined ? { backgroundAfter } : {})
  })
  return { check, pages: () => pages }
}

async function settle (ms = 50): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

test('without a gate the first pass runs at start', async (t) => {
  const { check, pages } = rig()
  t.after(async () => { await check.stop() })
  await check.start()
  await settle()
  assert.equal(pages(), 1)
  assert.equal(check.report().state, 'damaged')
  assert.equal(check.report().missing, 1)
})

test('with a gate the first pass waits for it; stopped before it opens, the check never reads the index', async (t) => {
  let open = (): void => {}
  const { check, pages } = rig(new Promise<void>((resolve) => { open = resolve }))
  t.after(async () => { await check.stop() })
  await check.start()
  await settle()
  assert.equal(pages(), 0, 'nothing read while the gate is shut')
  assert.equal(check.report().state, 'checking')
  open()
  await settle()
  assert.equal(pages(), 1)
  assert.equal(check.report().state, 'damaged')

  let openLate = (): void => {}
  const late = rig(new Promise<void>((resolve) => { openLate = resolve }))
  await late.check.start()
  await late.check.stop()
  openLate()
  await settle()
  assert.equal(late.pages(), 0)
})
