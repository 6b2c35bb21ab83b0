// Issue 12: connector imports pass the bounded-JSON rules request bodies have (depth, exact
// numbers, value count, size), with the same codes, reported per record or item; the rest of
// the export is imported.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { runImport } from '../../src/connectors/import.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { chatgptExportFiles, simpleConversation } from './fixtures/chatgpt.js'
import { writeZipExport } from './fixtures/exports.js'
import { SCHEMAS_DIR, shippedConnector, testPlugin } from './fixtures/run.js'

const T0 = 1704067200

test('import: streamed records and whole files that break a rule are listed with the code and path, the rest of the export is stored', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const good = [0, 1, 2].map((i) => JSON.stringify(simpleConversation(`conv-${i}`, `Conversation ${i}`, T0 + i * 1000, [[`q${i}`, `a${i}`]])))
  const deep = JSON.stringify(simpleConversation('conv-deep', 'deep', T0, [['q', 'a']])).replace('"title":', `"extra":${'['.repeat(600)}${']'.repeat(600)},"title":`)
  const huge = JSON.stringify(simpleConversation('conv-num', 'num', T0, [['q', 'a']])).replace(/"create_time":[0-9.]+/, '"create_time":1e400')
  const bigInt = JSON.stringify(simpleConversation('conv-int', 'int', T0, [['q', 'a']])).replace(/"update_time":[0-9.]+/, '"update_time":9007199254740993')
  const files = chatgptExportFiles([])
  const zip = await writeZipExport(dir, 'chatgpt.zip', {
    ...files,
    'conversations.json': `[${good[0]},${deep},${good[1]},${huge},${bigInt},${good[2]}]`,
    // read whole: a file nested too deep is passed over with the code, never a crash
    'shared_conversations.json': `[${'['.repeat(1000)}${']'.repeat(1000)}]`
  })
  const summary = await runImport({ connector: await shippedConnector('chatgpt'), source: zip, submit: daemonSubmit({ socketPath: server.socketPath }) })
  assert.equal(summary.failure, undefined, JSON.stringify(summary.failure))
  assert.deepEqual(summary.total, { items: 3, stored: 3, duplicate: 0, rejected: 0, waiting: 0 })
  const skipped = Object.fromEntries(summary.skipped.map((s) => [s.path, s]))
  assert.equal(skipped['conversations.json $[1]']?.errorCode, 'JSON_TOO_DEEP')
  assert.equal(skipped['conversations.json $[3]']?.errorCode, 'NUMBER_NOT_REPRESENTABLE')
  assert.match(skipped['conversations.json $[3]']!.reason, /^NUMBER_NOT_REPRESENTABLE: .*the record at \$\[3\] was left out: .*\$\[3\]\.create_time: 1e400/)
  assert.equal(skipped['conversations.json $[4]']?.errorCode, 'NUMBER_NOT_REPRESENTABLE')
  assert.match(skipped['shared_conversations.json']!.reason, /nested deeper than 512 levels/)
})

test('import: items whose data breaks a rule are rejected with its code, here or at the daemon; the others are stored', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await testPlugin(join(dir, 'plugins'), 'hostile', ['chatgpt.conversations'], `
export default {
  async * read (source) {
    const at = source.exportedAt
    const item = (id, extra) => ({ scope: 'chatgpt.conversations', collectedAt: at, data: { id, title: id, messages: [], ...extra }, label: id })
    let deep = []
    for (let i = 0; i < 100000; i++) deep = [deep]
    yield item('fine')
    yield item('nan', { score: NaN })
    yield item('infinite', { score: -Infinity })
    yield item('deep', { nested: deep })
    yield item('wide', { extra: Object.fromEntries(Array.from({ length: 600000 }, (_, i) => ['k' + i, i])) })
    yield item('fine too')
  }
}
`)
  const zip = await writeZipExport(dir, 'x.zip', { 'a.json': '{}' })
  const summary = await runImport({ connector, source: zip, submit: daemonSubmit({ socketPath: server.socketPath }), concurrency: 1 })
  assert.equal(summary.failure, undefined, JSON.stringify(summary.failure))
  assert.deepEqual(summary.total, { items: 6, stored: 2, duplicate: 0, rejected: 4, waiting: 0 })
  const rejected = Object.fromEntries(summary.rejected.map((r) => [r.label, r]))
  assert.equal(rejected.nan?.errorCode, 'NUMBER_NOT_REPRESENTABLE')
  assert.match(rejected.nan!.reasons[0]!, /at \$\.score: NaN/)
  assert.equal(rejected.infinite?.errorCode, 'NUMBER_NOT_REPRESENTABLE')
  assert.equal(rejected.deep?.errorCode, 'JSON_TOO_DEEP')
  // the count is the daemon's (its ingest.maxJsonValues): refused there, answered for this item
  assert.equal(rejected.wide?.errorCode, 'JSON_TOO_MANY_VALUES')
  assert.deepEqual(server.submissions.map((s) => s.status), [201, 400, 201], 'items broken locally never reach the daemon')
})
