// The ICU-free localeCompare the sync node installs (src/sync/ascii-collation.ts): the same answers
// as ICU's own collator for printable ASCII, checked against it here; everything else, and every
// call with a locale or options, still goes to ICU.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { join } from 'node:path'
import { compareAscii, installAsciiLocaleCompare, rootCollationLocale } from '../../src/sync/ascii-collation.js'
import { instant, startDevice, testOwner, waitFor } from '../support/sync-device.js'
import { tempDir } from '../support/tmp.js'

const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i))
const icu = new Intl.Collator('en')
const sign = (n: number): number => n < 0 ? -1 : n > 0 ? 1 : 0

test('printable ASCII is ordered exactly as ICU\'s root collation orders it', () => {
  // every pair of characters, and of two-character strings over a mix of letters, digits and punctuation
  for (const a of printable) for (const b of printable) assert.equal(compareAscii(a, b), sign(icu.compare(a, b)), JSON.stringify([a, b]))
  const mix = [...'aAbBzZ09/.:-_ ~$']
  const pairs = mix.flatMap((x) => mix.map((y) => x + y))
  for (const a of pairs) for (const b of pairs) assert.equal(compareAscii(a, b), sign(icu.compare(a, b)), JSON.stringify([a, b]))
  // random strings, many of them equal but for case or one a prefix of the other
  const alphabet = [...'aAbBcC019/.-:_ @']
  const randomString = (): string => Array.from({ length: randomInt(0, 9) }, () => alphabet[randomInt(alphabet.length)]).join('')
  for (let i = 0; i < 50_000; i++) {
    const a = randomString()
    const b = i % 3 === 0 ? a.toUpperCase() : i % 3 === 1 ? a + randomString() : randomString()
    assert.equal(compareAscii(a, b), sign(icu.compare(a, b)), JSON.stringify([a, b]))
  }
  // what libp2p sorts
  const protocols = ['/ipfs/ping/1.0.0', '/hearth/sync/1.0.0', '/ipfs/id/push/1.0.0', '/ipfs/id/1.0.0', '/libp2p/circuit/relay/0.2.0/stop']
  assert.deepEqual([...protocols].sort((a, b) => compareAscii(a, b)!), [...protocols].sort((a, b) => icu.compare(a, b)))
  assert.deepEqual([...['ProtocolVersion', 'AgentVersion']].sort((a, b) => compareAscii(a, b)!), ['AgentVersion', 'ProtocolVersion'])
})

test('anything else is left to ICU: control characters, other scripts, accents', () => {
  for (const [a, b] of [['a\u0001', 'a'], ['é', 'e'], ['a', 'ä'], ['\t', ' '], ['x', 'Ω'], ['abc', 'ab\u00e7']]) assert.equal(compareAscii(a!, b!), null, JSON.stringify([a, b]))
})

test('installed only where the default locale collates as root, once, and calls with a locale or options still reach ICU', () => {
  assert.equal(rootCollationLocale({}), true)
  assert.equal(rootCollationLocale({ LANG: 'C.UTF-8' }), true)
  assert.equal(rootCollationLocale({ LANG: 'en_US.UTF-8', LC_ALL: '' }), true)
  assert.equal(rootCollationLocale({ LANG: 'POSIX' }), true)
  assert.equal(rootCollationLocale({ LANG: 'da_DK.UTF-8' }), false, 'Danish sorts uppercase first')
  assert.equal(rootCollationLocale({ LANG: 'en_US.UTF-8', LC_MESSAGES: 'lt_LT.UTF-8' }), false, 'ICU takes LC_MESSAGES first')
  assert.equal(rootCollationLocale({ LC_ALL: 'tr_TR.UTF-8', LANG: 'en_US.UTF-8' }), false)
  const original = String.prototype.localeCompare
  try {
    installAsciiLocaleCompare({ LANG: 'sv_SE.UTF-8' })
    assert.equal(String.prototype.localeCompare, original, 'not for a tailored locale')
    installAsciiLocaleCompare({ LANG: 'C.UTF-8' })
    const installed = String.prototype.localeCompare
    assert.notEqual(installed, original)
    installAsciiLocaleCompare({ LANG: 'C.UTF-8' })
    assert.equal(String.prototype.localeCompare, installed, 'once')
    assert.equal('B'.localeCompare('a'), 1)
    assert.equal('a'.localeCompare('a'), 0)
    assert.equal('ä'.localeCompare('z'), -1, 'ICU for the rest')
    assert.equal('a'.localeCompare('B', 'en', { caseFirst: 'upper' }), -1)
    assert.equal('a'.localeCompare('A', 'en', { caseFirst: 'upper' }), 1, 'options reach ICU')
    assert.equal('a'.localeCompare('A', undefined, { sensitivity: 'base' }), 0)
    assert.equal(Object.keys(String.prototype).includes('localeCompare'), false, 'not enumerable')
  } finally {
    Object.defineProperty(String.prototype, 'localeCompare', { value: original, writable: true, configurable: true, enumerable: false })
  }
})

test('two sync nodes start, connect and identify each other without a call reaching ICU\'s collator', { skip: !rootCollationLocale() }, async (t) => {
  const real = String.prototype.localeCompare
  let icuCalls = 0
  // what the sync node's install finds and falls back to
  Object.defineProperty(String.prototype, 'localeCompare', { value: function (this: string, ...args: Parameters<typeof real>) { icuCalls++; return real.apply(this, args) }, writable: true, configurable: true, enumerable: false })
  t.after(() => { Object.defineProperty(String.prototype, 'localeCompare', { value: real, writable: true, configurable: true, enumerable: false }) })
  const dir = await tempDir(t)
  const owner = await testOwner()
  const a = await startDevice({ dir: join(dir, 'a'), owner })
  t.after(async () => { await a.stop() })
  const b = await startDevice({ dir: join(dir, 'b'), owner, bootstrapPeers: a.addrs() })
  t.after(async () => { await b.stop() })
  await a.writeLocal('instagram.profile', { username: 'sorted' }, instant(1))
  await waitFor('B to get A\'s file', async () => (await b.index.count()) === 1)
  const seen = await b.node.libp2p.peerStore.get(a.node.libp2p.peerId)
  assert.ok(seen.protocols.length > 1, 'identify stored A\'s protocols, sorted')
  assert.deepEqual(seen.protocols, [...seen.protocols].sort((x, y) => new Intl.Collator('en').compare(x, y)))
  assert.equal(icuCalls, 0)
})
