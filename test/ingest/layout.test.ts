// The data folder's layout: which paths are data files (the common `scope/name.json` and every
// other spelling a file event or a scan may give), and which are ignored and why.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { join } from 'node:path'
import { absoluteDataPath, classifyAnySpelling, classifyDataPath } from '../../src/ingest/layout.js'

test('a file directly inside a scope folder with a .json name is data, with its scope checked', () => {
  assert.deepEqual(classifyDataPath('instagram.profile/2026-11-26T15-00-00.123Z.json'), {
    kind: 'data', rel: 'instagram.profile/2026-11-26T15-00-00.123Z.json', scopeFolder: 'instagram.profile', name: '2026-11-26T15-00-00.123Z.json', scopeProblem: null
  })
  const badScope = classifyDataPath('Instagram/x.json')
  assert.equal(badScope.kind, 'data')
  assert.match((badScope as { scopeProblem: string }).scopeProblem, /2 or 3/)
  // other spellings of the same place: backslashes, doubled or outer slashes, an upper-case suffix
  for (const rel of ['instagram.profile\\a.json', '/instagram.profile//a.json/', 'instagram.profile/a.JSON']) {
    const c = classifyDataPath(rel)
    assert.equal(c.kind, 'data', rel)
    assert.equal(c.rel, `instagram.profile/${rel.endsWith('JSON') ? 'a.JSON' : 'a.json'}`, rel)
  }
})

test('hidden names, temporaries, other suffixes and other depths are ignored with their reason', () => {
  const reasons: Array<[string, string]> = [
    ['.hidden/a.json', 'hidden file or folder'],
    ['instagram.profile/.a.json', 'hidden file or folder'],
    ['instagram.profile/.json', 'hidden file or folder'],
    ['instagram.profile/a.json.tmp', 'temporary file'],
    ['instagram.profile/a.json~', 'temporary file'],
    ['instagram.profile/a.JSON.part', 'temporary file'],
    ['instagram.profile/a.txt', 'not a .json file'],
    ['a.json', 'not directly inside a scope folder'],
    ['instagram.profile/sub/a.json', 'not directly inside a scope folder'],
    ['instagram.profile\\sub/a.json', 'not directly inside a scope folder'],
    ['/a.json', 'not directly inside a scope folder']
  ]
  for (const [rel, reason] of reasons) assert.deepEqual(classifyDataPath(rel), { kind: 'ignored', rel: rel.split(/[\\/]/).filter((p) => p !== '').join('/'), reason }, rel)
})

test('classifyDataPath\'s fast path for `scope/name.json` answers exactly as the classification of any spelling, for hostile names too', () => {
  const long = 'l'.repeat(100_000)
  const hostile = [
    'a/b\0.json', '\0/b.json', '../x.json', './x.json', 'a/..json', 'a/...json', '.', '..', '/', '//', '', 'a/.json', '.a/b.json', 'a/b.json/',
    'A/B.JSON', 'A/B.json', 'instagram.profile/a.Json', 'a\\b.json', 'a/b\\c.json', '\\a/b.json', 'a/b.json\\', 'a\\..\\b.json',
    `${long}/b.json`, `a/${long}.json`, `${long}/${long}.json`, `a/${'/'.repeat(1000)}b.json`,
    'é/ü.json', 'instagram.profile/2026-11-26T15:00:00.000Z.json', '日本/データ.json', 'a/b\u2215c.json', 'a\u2044b/c.json', 'a/b.json\u200b', 'a/b.jso\u0301n',
    'a/b.json.tmp', 'a/b~.json', 'a/b.json~', 'a/ .json', ' /b.json', 'a/b .json', 'a/b.json ', 'a/b\n.json', 'a\r/b.json', 'a/b.json\0'
  ]
  // and every short combination of the pieces a fast path could get wrong
  const pieces = ['a', '.', '/', '\\', '.json', '.JSON', '~', '\0', 'é']
  const combos: string[] = []
  let level = ['']
  for (let n = 0; n < 4; n++) { level = level.flatMap((c) => pieces.map((p) => c + p)); combos.push(...level) }
  for (const rel of new Set([...hostile, ...combos])) {
    assert.deepEqual(classifyDataPath(rel), classifyAnySpelling(rel), JSON.stringify(rel.length > 60 ? `${rel.slice(0, 60)}… (${rel.length})` : rel))
  }
})

test('absoluteDataPath is the data folder joined with the path\'s names, in every spelling of either', () => {
  const folders = ['/home/a/.hearth/data', '/home/a/.hearth/data/', '/home/a/./data', '/home/a/x/../data', '/', 'data', '../data', './data', '', '/home//a/data']
  const paths = ['instagram.profile/2026-11-26T15-00-00.123Z.json', 'instagram.profile', 'a/b/c', 'a//b', '/a', 'a/', '.', '..', 'a/../b', 'a/./b', '.a/..b/...', '', '..a/b..']
  for (const folder of folders) {
    for (const rel of paths) assert.equal(absoluteDataPath(folder, rel), join(folder, ...rel.split('/')), `${folder} + ${rel}`)
  }
})
