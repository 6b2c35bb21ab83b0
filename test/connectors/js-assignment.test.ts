// X archives' `window.YTD.<type>.part0 = [...]` files: the JSON after the `=` streams through,
// however the bytes are chunked; anything else is refused with EXPORT_UNREADABLE.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { jsonOfAssignment } from '../../src/connectors/js-assignment.js'
import { streamJsonValues } from '../../src/connectors/json-stream.js'
import { isHearthError } from '../../src/errors.js'

async function values (text: string, chunk: number): Promise<unknown[]> {
  const bytes = new TextEncoder().encode(text)
  async function * chunks (): AsyncGenerator<Uint8Array> { for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk) }
  const out: unknown[] = []
  for await (const v of streamJsonValues(jsonOfAssignment(chunks(), 'tweets.js'), { paths: ['$.*'], what: 'tweets.js' })) out.push(v)
  return out
}

test('the JSON after window.YTD.<type>.partN = streams through, a closing semicolon and blanks dropped, semicolons inside strings kept', async () => {
  const list = [{ tweet: { full_text: 'a; b;', id_str: '1' } }, { tweet: { full_text: ' ; ', id_str: '2' } }, 'x = y;']
  for (const text of [
    `window.YTD.tweets.part0 = ${JSON.stringify(list, null, 2)}`,
    `\uFEFFwindow.YTD.tweets.part12=${JSON.stringify(list)};\r\n`,
    `window["YTD"].tweets.part0 = ${JSON.stringify(list)} ; \n`
  ]) {
    for (const chunk of [1, 2, 5, 64, 1 << 20]) assert.deepEqual(await values(text, chunk), list, `${JSON.stringify(text.slice(0, 30))} in chunks of ${chunk}`)
  }
})

test('a file that is not an assignment of JSON is EXPORT_UNREADABLE', async () => {
  const unreadable = (err: unknown): boolean => isHearthError(err, 'EXPORT_UNREADABLE')
  await assert.rejects(values('[{"tweet": {}}]', 4), (err: unknown) => unreadable(err) && /not JSON assigned to a name/.test((err as Error).message))
  await assert.rejects(values('alert(1); x = [1]', 4), unreadable, 'a statement before the name')
  await assert.rejects(values(' '.repeat(2000) + 'x = [1]', 64), unreadable, 'no `=` within the first KiB')
  await assert.rejects(values('', 4), unreadable)
  await assert.rejects(values('window.YTD.like.part0 = ', 4), (err: unknown) => unreadable(err) && /empty/.test((err as Error).message))
  await assert.rejects(values('window.YTD.like.part0 = [1, 2', 4), unreadable, 'cut off')
})
