// A scope's `search` declaration in connector.json: the shipped connectors' are valid and kept,
// and a malformed one is a problem for the plugin's author, not a crash or a silent default.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkConnectorMetadata } from '../../src/connectors/metadata.js'
import { shippedPluginsDir } from '../../src/connectors/loader.js'

test('every shipped scope declares what the search indexes, and the declaration is kept', () => {
  for (const id of ['chatgpt', 'instagram', 'spotify', 'youtube']) {
    const raw = JSON.parse(readFileSync(join(shippedPluginsDir(), id, 'connector.json'), 'utf8'))
    const checked = checkConnectorMetadata(raw, id)
    assert.ok(checked.ok, JSON.stringify(checked))
    for (const s of checked.metadata.scopes) {
      assert.ok(s.search?.fields !== undefined && s.search.fields.length > 0, `${s.scope} declares its fields`)
      // every declared field is a property the scope's schema knows somewhere
      const schema = readFileSync(new URL(`../../schemas/${s.scope}.json`, import.meta.url), 'utf8')
      for (const f of [...s.search.fields, ...(s.search.time ?? [])]) assert.ok(schema.includes(`"${f.split('.').at(-1)!}"`), `${s.scope}: ${f} is in its schema`)
    }
  }
})

test('a malformed search declaration is a problem with its place', () => {
  const base = { connectorId: 'x', displayName: 'X', version: '1', scopes: [{ scope: 'x.items', label: 'Items', description: '' }] }
  const withSearch = (search: unknown): ReturnType<typeof checkConnectorMetadata> => checkConnectorMetadata({ ...base, scopes: [{ ...base.scopes[0], search }] }, 'x')
  for (const bad of [null, 'text', [], { fields: 'text' }, { fields: [1] }, { fields: ['a b'] }, { time: Array(65).fill('t') }, { versions: 'newest' }]) {
    const checked = withSearch(bad)
    assert.equal(checked.ok, false, JSON.stringify(bad))
    assert.match((checked as { problems: string[] }).problems.join(), /scopes\[0\]\.search/)
  }
  const good = withSearch({ fields: ['text', 'share.text'], time: ['sentAt'], versions: 'latest' })
  assert.ok(good.ok)
  assert.deepEqual(good.metadata.scopes[0]!.search, { fields: ['text', 'share.text'], time: ['sentAt'], versions: 'latest' })
})
