// A receiver SIGKILLed at one point of a received file's write (test/ingest/receive-crash.test.ts):
//   deferred <root>: a small file received with its ciphertext kept in storage's memory (as sync
//     stores it), indexed and journaled; killed before the journal's checkpoint writes the block.
//   taken <root> [earlier]: a small file whose name another writer takes between its record's
//     commit and its link; killed after the link found the name taken, before the record is
//     reverted. With `earlier`, the index held a record of the name before (a rejected version
//     whose file is gone).
// Prints one JSON line ({cid, path, ...}) just before it kills itself.
import '../../src/polyfill.js'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileIndex } from '../../src/db/file-index.js'
import type { IngestIndex } from '../../src/ingest/pipeline.js'
import { SCHEMA } from './ingest-fixtures.js'
import { peerFile, receiveRig, rejectedVersion } from './receive-rig.js'
import { indexWith } from './journal-rig.js'

const [scenario, root, earlier] = process.argv.slice(2) as ['deferred' | 'taken', string, 'earlier' | undefined]

function die (report: object): never {
  process.stdout.write(`${JSON.stringify(report)}\n`)
  process.kill(process.pid, 'SIGKILL')
  throw new Error('unreachable')
}

/** The index as the pipeline sees it, with the other writer taking a received file's name once its record is committed. */
function takenAfterRecord (theirs: Uint8Array, report: () => object) {
  return (index: FileIndex): IngestIndex => indexWith(index, {
    put: async (record, opts) => {
      const r = await index.put(record, opts)
      if (record.origin === 'peer') await writeFile(join(root, 'data', record.path), theirs, { flag: 'wx' })
      return r
    },
    revert: async () => { die(report()) }
  })
}

const file = await peerFile(`killed-${scenario}`)
if (scenario === 'deferred') {
  const rig = await receiveRig(root)
  const stored = await rig.storage.addDeferred!(file.ciphertext)
  if (stored === null) throw new Error('storage keeps no deferred blocks')
  const outcome = await rig.pipeline.receive(file.ciphertext, { cid: stored.cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files, deferred: true })
  die({ cid: stored.cid, path: file.path, outcome, pendingEntries: rig.journal.pending })
} else {
  const theirs = new TextEncoder().encode('{"someone":"else"}')
  let cid = ''
  const rig = await receiveRig(root, { wrapIndex: takenAfterRecord(theirs, () => ({ cid, path: file.path, theirs: Buffer.from(theirs).toString() })) })
  if (earlier === 'earlier') await rig.index.put(rejectedVersion(file.path))
  const stored = await rig.storage.addDeferred!(file.ciphertext)
  if (stored === null) throw new Error('storage keeps no deferred blocks')
  cid = stored.cid
  await rig.pipeline.receive(file.ciphertext, { cid, schemaId: SCHEMA.id, origin: 'peer', unsyncedFiles: stored.files, deferred: true })
  throw new Error('the receive ended without reverting the taken name')
}
