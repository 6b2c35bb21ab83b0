import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tempDir } from '../support/tmp.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { accountHistoryFiles, extendedHistoryFiles, TRACKS, yourLibrary } from './fixtures/spotify.js'
import { assertItemsValid, readItems, shippedConnector } from './fixtures/run.js'

test('spotify: account data gives the saved tracks and one history item per month', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const files = {
    'Spotify Account Data/YourLibrary.json': yourLibrary([...TRACKS, { artist: '', album: 'x', track: 'no artist', uri: 'spotify:track:x' }]),
    'Spotify Account Data/Userdata.json': { username: 'jane', email: 'jane@example.com', country: 'FR' },
    'Spotify Account Data/Read_Me_First.pdf': '%PDF-1.4',
    ...accountHistoryFiles()
  }
  const { zip, folder } = await writeBothExports(dir, 'my_spotify_data', files)
  const fromZip = await readItems(connector, zip)
  const fromFolder = await readItems(connector, folder)
  assert.deepEqual(fromFolder.items, fromZip.items)
  await assertItemsValid(fromZip.items)
  assert.deepEqual(fromZip.notes, ['1 play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)'])

  const [library, january, february] = fromZip.items
  assert.equal(fromZip.items.length, 3)
  assert.equal(library!.scope, 'spotify.savedTracks')
  assert.equal(library!.collectedAt, '2024-05-04T10:20:30Z', 'the library snapshot is dated by the export')
  assert.deepEqual(library!.data, { tracks: TRACKS }, 'a track without an artist is left out')

  assert.equal(january!.scope, 'spotify.streamingHistory')
  assert.equal(january!.collectedAt, '2024-01-31T23:59:00Z', 'a month is dated by its last play')
  assert.equal(january!.label, '2024-01: 3 plays')
  assert.deepEqual(january!.data, {
    month: '2024-01',
    plays: [
      { endedAt: '2024-01-01T00:03:00Z', msPlayed: 257000, kind: 'track', track: 'First Love', artist: '宇多田ヒカル' },
      { endedAt: '2024-01-15T07:30:00Z', msPlayed: 1500000, kind: 'episode', episode: 'Monday, Jan. 15', show: 'The Daily' },
      { endedAt: '2024-01-31T23:59:00Z', msPlayed: 320357, kind: 'track', track: 'One More Time', artist: 'Daft Punk' }
    ]
  })
  assert.deepEqual(february!.data, {
    month: '2024-02',
    plays: [
      { endedAt: '2024-02-01T00:00:00Z', msPlayed: 0, kind: 'track', track: 'CUFF IT', artist: 'Beyoncé' },
      { endedAt: '2024-02-14T08:15:00Z', msPlayed: 1200, kind: 'track', track: 'Untitled #1 🌌', artist: 'Sigur Rós' }
    ]
  })
  assert.equal(february!.collectedAt, '2024-02-14T08:15:00Z')
})

test('spotify: the extended history keeps details but not IP address or username; audiobooks and video are left out', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const zip = await writeZipExport(dir, 'extended.zip', extendedHistoryFiles())
  const { items, notes } = await readItems(connector, zip)
  await assertItemsValid(items)
  assert.deepEqual(notes, [
    'no YourLibrary.json in this export: nothing for spotify.savedTracks',
    '1 play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)'
  ])
  assert.deepEqual(items.map((i) => [i.data.month, i.collectedAt]), [
    ['2019-07', '2019-07-01T10:00:00Z'],
    ['2023-12', '2023-12-31T23:59:59Z'],
    ['2024-01', '2024-01-03T07:00:00Z']
  ])
  assert.deepEqual((items[1]!.data as { plays: unknown[] }).plays, [{
    endedAt: '2023-12-31T23:59:59Z',
    msPlayed: 1000,
    kind: 'track',
    track: 'First Love',
    artist: '宇多田ヒカル',
    album: 'First Love',
    uri: 'spotify:track:3vEyT8LhT2ImuAj2BixRCs',
    platform: 'ios',
    country: 'FR',
    reasonStart: 'trackdone',
    reasonEnd: 'fwdbtn',
    shuffle: true,
    skipped: true,
    offline: false,
    incognito: false
  }])
  const january = (items[2]!.data as { plays: Array<Record<string, unknown>> }).plays
  assert.equal(january.length, 2)
  assert.equal(january[0]!.offline, true)
  assert.equal('incognito' in january[0]!, false, 'a null flag is left out, not guessed')
  assert.deepEqual(january[1], {
    endedAt: '2024-01-03T07:00:00Z',
    msPlayed: 1500000,
    kind: 'episode',
    episode: 'Monday, Jan. 15',
    show: 'The Daily',
    uri: 'spotify:episode:4rOoJ6Egrf8K2IrywzwOMk',
    platform: 'ios',
    country: 'FR',
    reasonStart: 'trackdone',
    reasonEnd: 'trackdone',
    shuffle: false,
    skipped: false,
    offline: false,
    incognito: false
  })
  assert.doesNotMatch(JSON.stringify(items), /192\.0\.2\.10|"jane"/)
})

test('spotify: with both histories in one folder the extended one wins; missing files give notes, not items', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const both = await readItems(connector, await writeZipExport(dir, 'both.zip', {
    'Spotify Account Data/YourLibrary.json': yourLibrary([]),
    ...accountHistoryFiles(),
    ...extendedHistoryFiles()
  }))
  await assertItemsValid(both.items)
  assert.ok(both.notes.includes('both the extended and the account-data streaming history are here; using the extended one'))
  assert.deepEqual(both.items.map((i) => i.data.month ?? i.scope), ['spotify.savedTracks', '2019-07', '2023-12', '2024-01'])
  assert.deepEqual(both.items[0]!.data, { tracks: [] }, 'an empty library is an empty snapshot')

  const empty = await readItems(connector, await writeZipExport(dir, 'empty.zip', { 'Spotify Account Data/Userdata.json': { username: 'jane' } }))
  assert.deepEqual(empty.items, [])
  assert.deepEqual(empty.notes, [
    'no YourLibrary.json in this export: nothing for spotify.savedTracks',
    'no StreamingHistory*.json or Streaming_History_Audio_*.json in this export: nothing for spotify.streamingHistory'
  ])

  const odd = await readItems(connector, await writeZipExport(dir, 'odd.zip', {
    'YourLibrary.json': { albums: [] },
    'StreamingHistory_music_0.json': { not: 'a list' },
    'StreamingHistory_music_1.json': []
  }))
  assert.deepEqual(odd.items, [], 'no months without plays')
  assert.deepEqual(odd.notes, [
    'YourLibrary.json has no "tracks" list: nothing for spotify.savedTracks',
    'StreamingHistory_music_0.json is not a list of plays; skipped'
  ])
})
