import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { isHearthError } from '../../src/errors.js'
import { MAX_SECRET_BYTES, readSecret } from '../../src/identity/wallet-input.js'
import { tempDir } from '../support/tmp.js'

test('readSecret reads a file or stdin and trims surrounding whitespace', async (t) => {
  const dir = await tempDir(t)
  const file = join(dir, 'key.txt')
  await writeFile(file, '\n  0xabc \r\n')
  assert.equal(await readSecret({ file }), '0xabc')

  const stdin = new PassThrough()
  stdin.write('word one ')
  stdin.end('word two\n')
  assert.equal(await readSecret({ stdin }), 'word one word two')
})

test('readSecret: empty, missing, unreadable or oversized input is a typed error', async (t) => {
  const dir = await tempDir(t)
  const empty = join(dir, 'empty')
  await writeFile(empty, ' \n ')
  await assert.rejects(readSecret({ file: empty }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  await assert.rejects(readSecret({ file: join(dir, 'missing') }), (e: unknown) => isHearthError(e, 'FILE_UNREADABLE'))
  await assert.rejects(readSecret({ file: dir }), (e: unknown) => isHearthError(e, 'FILE_UNREADABLE'))
  const big = join(dir, 'big')
  await writeFile(big, 'a'.repeat(MAX_SECRET_BYTES + 1))
  await assert.rejects(readSecret({ file: big }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  const stdin = new PassThrough()
  stdin.end(Buffer.alloc(MAX_SECRET_BYTES + 1, 0x61))
  await assert.rejects(readSecret({ stdin }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
  const closed = new PassThrough()
  closed.end()
  await assert.rejects(readSecret({ stdin: closed }), (e: unknown) => isHearthError(e, 'INVALID_ARGUMENT'))
})
