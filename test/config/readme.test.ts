import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { withConfigTable } from '../../src/config/table.js'

test('the README\'s configuration table is the one generated from the schema', async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
  assert.equal(readme, withConfigTable(readme), 'README.md is stale: run `node --import tsx scripts/config-table.ts --write`')
})
