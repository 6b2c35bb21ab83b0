import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tempDir } from '../support/tmp.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { accountHistoryFiles, extendedHistoryFiles, extendedTrack, playlistFile, TRACKS, yourLibrary } from './fixtures/spotify.js'
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
  assert.deepEqual(fromZip.notes, ['no Playlist1.json in this export: nothing for spotify.playlists', '1 play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)'])

  assert.deepEqual(fromZip.skipped, [
    { path: 'Spotify Account Data/Read_Me_First.pdf', reason: "the export's own documentation" },
    { path: 'Spotify Account Data/Userdata.json', reason: 'account details (e-mail, phone, birth date, address): left out' }
  ], 'files it knows and leaves out say why')
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

test('spotify: the extended history keeps details but not IP address or username; audiobooks are left out, video plays kept', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const zip = await writeZipExport(dir, 'extended.zip', extendedHistoryFiles())
  const { items, notes } = await readItems(connector, zip)
  await assertItemsValid(items)
  assert.deepEqual(notes, [
    'no YourLibrary.json in this export: nothing for spotify.savedTracks',
    'no Playlist1.json in this export: nothing for spotify.playlists',
    '1 play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)'
  ])
  assert.deepEqual(items.map((i) => [i.data.month, i.collectedAt]), [
    ['2019-07', '2019-07-01T10:00:00Z'],
    ['2023-12', '2023-12-31T23:59:59Z'],
    ['2024-01', '2024-01-05T08:00:00Z']
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
  assert.equal(january.length, 4)
  assert.deepEqual(january.slice(2).map((p) => [p.kind, p.track ?? p.episode, p.platform]), [['track', 'Rain on Me', 'android'], ['episode', 'Ep. 12 (video)', 'ios']], 'Streaming_History_Video_* rows are plays')
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

test('spotify: with both histories in one folder they are merged by time range; missing files give notes, not items', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const both = await readItems(connector, await writeZipExport(dir, 'both.zip', {
    'Spotify Account Data/YourLibrary.json': yourLibrary([]),
    ...accountHistoryFiles(),
    ...extendedHistoryFiles()
  }))
  await assertItemsValid(both.items)
  assert.ok(both.notes.includes('both streaming histories are here: the extended one covers 2019-07-01T10:00:00Z to 2024-01-05T08:00:00Z; 4 account-data play(s) outside that range added, 1 inside it taken from the extended history'), both.notes.join('\n'))
  assert.deepEqual(both.items.map((i) => i.data.month ?? i.scope), ['spotify.savedTracks', '2019-07', '2023-12', '2024-01', '2024-02'])
  const january = (both.items[3]!.data as { plays: Array<{ endedAt: string }> }).plays
  assert.deepEqual(january.map((p) => p.endedAt), ['2024-01-02T08:00:00Z', '2024-01-03T07:00:00Z', '2024-01-05T07:00:00Z', '2024-01-05T08:00:00Z', '2024-01-15T07:30:00Z', '2024-01-31T23:59:00Z'],
    'the account-data play of 2024-01-01 is inside the extended range and left to it; the later ones are added')
  assert.deepEqual(both.items[0]!.data, { tracks: [] }, 'an empty library is an empty snapshot')

  const empty = await readItems(connector, await writeZipExport(dir, 'empty.zip', { 'Spotify Account Data/Userdata.json': { username: 'jane' } }))
  assert.deepEqual(empty.items, [])
  assert.deepEqual(empty.notes, [
    'no YourLibrary.json in this export: nothing for spotify.savedTracks',
    'no Playlist1.json in this export: nothing for spotify.playlists',
    'no StreamingHistory*.json or Streaming_History_Audio_*.json in this export: nothing for spotify.streamingHistory'
  ])

  const odd = await readItems(connector, await writeZipExport(dir, 'odd.zip', {
    'YourLibrary.json': { albums: [] },
    'StreamingHistory_music_0.json': { not: 'a list' },
    'StreamingHistory_music_1.json': []
  }))
  assert.deepEqual(odd.items, [], 'no months without plays')
  assert.deepEqual(odd.notes, ['no Playlist1.json in this export: nothing for spotify.playlists'])
  assert.deepEqual(odd.skipped, [
    { path: 'YourLibrary.json', reason: 'no "tracks" list in it: nothing for spotify.savedTracks' },
    { path: 'StreamingHistory_music_0.json', reason: 'not a list of plays' }
  ])
})

test('spotify: playlists (tracks, episodes, local files), a file that is not JSON, and the history split over two archives', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const account = await writeZipExport(dir, 'my_spotify_data.zip', {
    'Spotify Account Data/YourLibrary.json': yourLibrary(TRACKS),
    'Spotify Account Data/Playlist1.json': playlistFile(),
    // real exports have held a file like this: cut off, not JSON
    'Spotify Account Data/Marquee.json': '[{"artistName": "Daft Punk", "segment": ',
    'Spotify Account Data/Userdata.json': { username: 'jane', email: 'jane@example.com' }
  })
  const history = extendedHistoryFiles()
  const names = Object.keys(history)
  const part1 = await writeZipExport(dir, 'my_spotify_data (1).zip', { [names[0]!]: history[names[0]!]! })
  // the older extended export: ip_addr_decrypted instead of ip_addr, endsong_N.json
  const older = history[names[1]!]!.map((p) => { const { ip_addr: ip, ...rest } = p as Record<string, unknown>; return { ...rest, ip_addr_decrypted: ip } })
  const part2 = await writeZipExport(dir, 'my_spotify_data (2).zip', { 'MyData/endsong_1.json': older, [names[2]!]: history[names[2]!]! })

  const r = await readItems(connector, [account, part1, part2])
  await assertItemsValid(r.items)
  assert.deepEqual(r.items.map((i) => i.scope === 'spotify.streamingHistory' ? i.data.month : i.scope), ['spotify.savedTracks', 'spotify.playlists', '2019-07', '2023-12', '2024-01'])
  assert.doesNotMatch(JSON.stringify(r.items), /192\.0\.2\.10|"jane"/, 'neither IP address field nor the username is kept')
  assert.deepEqual(r.items[1]!.data, {
    playlists: [
      {
        name: 'Road trip 🚗',
        lastModified: '2024-03-01',
        description: 'for the A7',
        followers: 2,
        items: [
          { kind: 'track', track: 'One More Time', artist: 'Daft Punk', album: 'Discovery', uri: 'spotify:track:0DiWol3AO6WpXZgp0goxAV', addedAt: '2024-02-28' },
          { kind: 'episode', episode: 'Monday, Jan. 15', show: 'The Daily', uri: 'spotify:episode:4rOoJ6Egrf8K2IrywzwOMk', addedAt: '2024-02-29' },
          { kind: 'local', uri: 'spotify:local:Artiste:Album:Chanson+%C3%A9t%C3%A9:215', addedAt: '2024-03-01' }
        ]
      },
      { name: 'Old faves', lastModified: '2021-06-01', items: [{ kind: 'track', track: 'First Love', artist: '宇多田ヒカル', album: 'First Love', uri: 'spotify:track:3vEyT8LhT2ImuAj2BixRCs' }] }
    ]
  })
  assert.deepEqual(r.skipped, [
    { path: 'Spotify Account Data/Marquee.json', reason: 'advertising segments Spotify inferred: left out' },
    { path: 'Spotify Account Data/Userdata.json', reason: 'account details (e-mail, phone, birth date, address): left out' }
  ], 'a known file is not read at all, so its damage does not matter')

})

test('spotify: an extended history that ends before the account data keeps every later play; identical rows in two files count once; re-reading is identical', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('spotify')
  const track = (ts: string, ms: number): Record<string, unknown> => extendedTrack(ts, 'One More Time', 'Daft Punk', 'Discovery', 'spotify:track:0DiWol3AO6WpXZgp0goxAV', ms)
  const extendedRows = [track('2024-11-30T10:00:30Z', 1000), track('2024-12-31T21:15:42Z', 2000)]
  const accountRows = [
    { endTime: '2024-12-31 21:15', artistName: 'Daft Punk', trackName: 'One More Time', msPlayed: 2000 }, // the extended row's play
    { endTime: '2025-01-01 00:10', artistName: 'Daft Punk', trackName: 'One More Time', msPlayed: 3000 },
    { endTime: '2025-01-01 00:10', artistName: 'Daft Punk', trackName: 'One More Time', msPlayed: 3000 }, // played twice in a minute: both kept
    { endTime: '2026-02-01 08:00', podcastName: 'The Daily', episodeName: 'Feb 1', msPlayed: 60000 }
  ]
  const files = {
    // the 2023 extended export and the 2025 one hold the same rows under different names
    'Spotify Extended Streaming History/Streaming_History_Audio_2024.json': extendedRows,
    'MyData/endsong_0.json': extendedRows,
    'Spotify Account Data/StreamingHistory_music_0.json': accountRows.slice(0, 3),
    'Spotify Account Data/StreamingHistory_podcast_0.json': accountRows.slice(3),
    'Spotify Account Data/SearchQueries.json': [{ searchQuery: 'daft' }],
    'Spotify Account Data/Inferences.json': { inferences: ['1P_Custom_Segment'] },
    'Spotify Account Data/Identifiers.json': { identifierType: 'email', identifierValue: 'jane@example.com' },
    'Spotify Technical Log Information/AccountActivity.json': [{ ip: '192.0.2.44' }],
    'Spotify Account Data/NewFeature2027.json': {}
  }
  const zip = await writeZipExport(dir, 'merge.zip', files)
  const first = await readItems(connector, zip)
  await assertItemsValid(first.items)
  const plays = first.items.flatMap((i) => (i.data as { plays: Array<{ endedAt: string; msPlayed: number }> }).plays.map((p) => [p.endedAt, p.msPlayed]))
  assert.deepEqual(plays, [
    ['2024-11-30T10:00:30Z', 1000],
    ['2024-12-31T21:15:42Z', 2000],
    ['2025-01-01T00:10:00Z', 3000],
    ['2025-01-01T00:10:00Z', 3000],
    ['2026-02-01T08:00:00Z', 60000]
  ])
  assert.deepEqual(first.items.map((i) => i.label), ['2024-11: 1 plays', '2024-12: 1 plays', '2025-01: 2 plays', '2026-02: 1 plays'])
  assert.deepEqual(first.skipped.map((s) => [s.path.split('/').at(-1), s.reason]), [
    ['Identifiers.json', 'account details (e-mail, phone, birth date, address): left out'],
    ['Inferences.json', 'advertising segments Spotify inferred: left out'],
    ['SearchQueries.json', 'not imported yet'],
    ['AccountActivity.json', 'app and device logs (device ids, IP addresses): left out']
  ], 'NewFeature2027.json is not known: the import lists it as unknown')
  assert.doesNotMatch(JSON.stringify(first.items), /jane|192\.0\.2|1P_Custom|daft"/)
  const again = await readItems(connector, zip)
  assert.deepEqual(again.items, first.items)
})
