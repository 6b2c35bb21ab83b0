// The connector guide's example (plugins/README.md) is real: its files are taken from the
// README, installed as a plugin, and run through an import.
import assert from 'node:assert/strict'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { runImport } from '../../src/connectors/import.js'
import { loadConnectors } from '../../src/connectors/loader.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { writeZipExport } from './fixtures/exports.js'
import { PLUGINS_DIR } from './fixtures/run.js'

/** `<!-- file: name -->` followed by a fenced block → {name: contents}. */
function readmeFiles (markdown: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const m of markdown.matchAll(/<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)```/g)) files[m[1]!] = m[2]!
  return files
}

test('plugins/README.md: the smallest working connector loads, imports, and re-imports as duplicates', async (t) => {
  const dir = await tempDir(t)
  const files = readmeFiles(await readFile(join(PLUGINS_DIR, 'README.md'), 'utf8'))
  assert.deepEqual(Object.keys(files).sort(), ['notes.items.json', 'notes/connector.json', 'notes/index.js'])
  for (const name of ['notes/connector.json', 'notes/index.js']) {
    await mkdir(dirname(join(dir, 'plugins', name)), { recursive: true })
    await writeFile(join(dir, 'plugins', name), files[name]!)
  }
  await mkdir(join(dir, 'schemas'))
  await writeFile(join(dir, 'schemas', 'notes.items.json'), files['notes.items.json']!)

  const { connectors, errors } = await loadConnectors(join(dir, 'plugins'))
  assert.deepEqual(errors, [])
  const notes = connectors[0]!
  assert.equal(notes.id, 'notes')

  const server = await startDataServer(t, { dir, schemasDir: join(dir, 'schemas') })
  const zip = await writeZipExport(dir, 'notes-export.zip', {
    'notes.json': [
      { title: 'Groceries', text: 'milk, eggs, 茶', updated: '2024-03-01T09:30:00Z' },
      { title: 'Ideas 💡', text: 'a local-first daemon', updated: '2024-03-02T18:00:00.250Z' }
    ]
  })
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const first = await runImport({ connector: notes, source: zip, submit })
  assert.deepEqual(first.total, { items: 2, stored: 2, duplicate: 0, rejected: 0, waiting: 0 })
  assert.deepEqual([...first.scopes[0]!.paths].sort(), ['notes.items/2024-03-01T09-30-00.000Z.json', 'notes.items/2024-03-02T18-00-00.250Z.json'])
  const again = await runImport({ connector: notes, source: zip, submit })
  assert.deepEqual(again.total, { items: 2, stored: 0, duplicate: 2, rejected: 0, waiting: 0 })

  const empty = await runImport({ connector: notes, source: await writeZipExport(dir, 'other.zip', { 'x.txt': 'x' }), submit })
  assert.deepEqual(empty.notes, ['no notes.json in this export'])
})
