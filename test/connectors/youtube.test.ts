import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { takeoutTime } from '../../plugins/youtube/takeout-html.js'
import { runImport } from '../../src/connectors/import.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { EXPORT_TIME, writeBothExports, writeZipExport } from './fixtures/exports.js'
import { assertItemsValid, readItems, SCHEMAS_DIR, shippedConnector } from './fixtures/run.js'
import { adClicksJson, CHANNELS, commentsCsv, playlistsBlocks, playlistsNow, searchHtml, searchJson, watchJson, youtubeTakeout, type Search, type Watch } from './fixtures/youtube.js'

// Newest first, as Takeout writes them; whole seconds so the HTML (which has no fraction) matches.
const WATCHES: Watch[] = [
  { title: 'Tōkyō by night 🌃 & <friends>', videoId: 'aaaaaaaaaa1', channel: { name: 'Cuisine de Zoé 🍰', id: 'UCxxxxxxxxxxxxxxxxxxxxx2' }, at: new Date('2024-07-02T20:15:00Z') },
  { title: 'Buy now', videoId: 'aaaaaaaaaa2', at: new Date('2024-07-01T08:00:00Z'), ad: true },
  { title: '', at: new Date('2024-06-30T23:59:59Z') },
  { title: 'Song', videoId: 'aaaaaaaaaa3', channel: { name: 'Artist - Topic', id: 'UCxxxxxxxxxxxxxxxxxxxxx9' }, at: new Date('2024-01-15T12:00:00Z'), music: true }
]
const SEARCHES: Search[] = [
  { query: 'pain au levain recette', at: new Date('2024-07-02T19:00:00Z') },
  { query: '東京 夜景', at: new Date('2024-06-01T06:30:00Z') }
]

test('youtube: watch history, searches and subscriptions; the HTML export gives what the JSON export gives', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('youtube')
  const fromJson = await readItems(connector, (await writeBothExports(dir, 'takeout-json', youtubeTakeout('json', WATCHES, SEARCHES))).zip)
  const fromHtml = await readItems(connector, await writeZipExport(dir, 'takeout-html.zip', youtubeTakeout('html', WATCHES, SEARCHES)))
  const absent = [
    'no playlists/ in this export: nothing for youtube.playlists or youtube.likes',
    'no comments/comments.csv in this export: nothing for youtube.comments'
  ]
  for (const r of [fromJson, fromHtml]) {
    await assertItemsValid(r.items)
    assert.deepEqual(r.notes, absent)
    assert.deepEqual(r.skipped, [{ path: 'Takeout/archive_browser.html', reason: "Takeout's index page of the archive" }])
  }
  assert.deepEqual(fromJson.items.map((i) => [i.scope, i.data.month ?? '', i.collectedAt]), [
    ['youtube.history', '2024-01', '2024-01-15T12:00:00.000Z'],
    ['youtube.history', '2024-06', '2024-06-30T23:59:59.000Z'],
    ['youtube.history', '2024-07', '2024-07-02T20:15:00.000Z'],
    ['youtube.searches', '2024-06', '2024-06-01T06:30:00.000Z'],
    ['youtube.searches', '2024-07', '2024-07-02T19:00:00.000Z'],
    ['youtube.subscriptions', '', EXPORT_TIME.toISOString().replace('.000Z', 'Z')]
  ])
  // HTML has no activity controls; otherwise the same entries
  const strip = (items: typeof fromJson.items): unknown => JSON.parse(JSON.stringify(items), (k, v) => k === 'activityControls' ? undefined : v)
  assert.deepEqual(strip(fromHtml.items), strip(fromJson.items))

  assert.deepEqual(fromJson.items[2]!.data, {
    month: '2024-07',
    items: [
      {
        header: 'YouTube',
        title: 'Watched Tōkyō by night 🌃 & <friends>',
        titleUrl: 'https://www.youtube.com/watch?v=aaaaaaaaaa1',
        subtitles: [{ name: 'Cuisine de Zoé 🍰', url: 'https://www.youtube.com/channel/UCxxxxxxxxxxxxxxxxxxxxx2' }],
        time: '2024-07-02T20:15:00.000Z',
        products: ['YouTube'],
        activityControls: ['YouTube watch history']
      },
      {
        header: 'YouTube',
        title: 'Watched Buy now',
        titleUrl: 'https://www.youtube.com/watch?v=aaaaaaaaaa2',
        time: '2024-07-01T08:00:00.000Z',
        products: ['YouTube'],
        activityControls: ['YouTube watch history'],
        details: [{ name: 'From Google Ads' }]
      }
    ]
  }, 'newest first, ads marked')
  assert.equal((fromJson.items[1]!.data.items as Array<{ title: string }>)[0]!.title, 'Watched a video that has been removed')
  assert.deepEqual(fromJson.items[4]!.data, { month: '2024-07', searches: [{ query: 'pain au levain recette', searchedAt: '2024-07-02T19:00:00.000Z', url: 'https://www.youtube.com/results?search_query=pain+au+levain+recette' }] })
  assert.deepEqual(fromJson.items[5]!.data, { channels: CHANNELS.map(([id, title]) => ({ id, url: `http://www.youtube.com/channel/${id}`, title })) })
})

test('youtube: older exports (subscriptions.json), unreadable times, other products and a broken file', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('youtube')
  const html = searchHtml(SEARCHES).replace('CEST', 'XYZT')
  const files = {
    'Takeout/YouTube/history/watch-history.json': [...watchJson(WATCHES.slice(0, 1)), { header: 'Google Ads', title: 'Watched x', time: '2024-07-01T00:00:00Z' }, { header: 'YouTube', title: 'no time' }],
    'Takeout/YouTube/history/search-history.html': html,
    'Takeout/YouTube/subscriptions/subscriptions.json': [
      { snippet: { title: 'Kurzgesagt – In a Nutshell', resourceId: { kind: 'youtube#channel', channelId: 'UCxxxxxxxxxxxxxxxxxxxxx1' }, publishedAt: '2016-02-03T10:00:00.000Z' } },
      { snippet: { title: 'no id' } }
    ],
    'Takeout/YouTube/playlists/Watch later.json': '{"broken": ',
    'Takeout/YouTube/playlists/likes.json': [
      { snippet: { title: 'A liked video', publishedAt: '2018-05-06T07:08:09.000Z', resourceId: { kind: 'youtube#video', videoId: 'eeeeeeeeeee' } } },
      { snippet: { title: 'no id' } }
    ]
  }
  const r = await readItems(connector, await writeZipExport(dir, 'old.zip', files))
  await assertItemsValid(r.items)
  assert.deepEqual(r.items.map((i) => i.scope), ['youtube.history', 'youtube.searches', 'youtube.subscriptions', 'youtube.likes'])
  assert.deepEqual(r.notes, [
    '2 watch-history entr(y/ies) without a readable time, or from another product, left out',
    '1 search-history entr(y/ies) without a readable time, or from another product, left out',
    'no comments/comments.csv in this export: nothing for youtube.comments'
  ])
  assert.deepEqual(r.items[3]!.data, { videos: [{ videoId: 'eeeeeeeeeee', likedAt: '2018-05-06T07:08:09.000Z', title: 'A liked video' }] }, 'pre-2020 likes.json')
  assert.equal(r.skipped.length, 1)
  assert.match(r.skipped[0]!.reason, /Watch later\.json .*is not valid JSON/)
  assert.deepEqual(r.items[2]!.data, { channels: [{ id: 'UCxxxxxxxxxxxxxxxxxxxxx1', url: 'https://www.youtube.com/channel/UCxxxxxxxxxxxxxxxxxxxxx1', title: 'Kurzgesagt – In a Nutshell', subscribedAt: '2016-02-03T10:00:00.000Z' }] })
})

test('youtube: Takeout HTML times in US and UK English, with named and numeric zones', () => {
  assert.equal(takeoutTime('Jan 1, 2024, 12:00:00\u202fAM CET'), '2023-12-31T23:00:00Z')
  assert.equal(takeoutTime('Jul 4, 2024, 3:05:09 PM PDT'), '2024-07-04T22:05:09Z')
  assert.equal(takeoutTime('4 Jul 2024, 15:05:09 BST'), '2024-07-04T14:05:09Z')
  assert.equal(takeoutTime('Sept 4, 2024, 3:05:09 PM GMT+05:30'), '2024-09-04T09:35:09Z')
  assert.equal(takeoutTime('4 juil. 2024, 15:05:09 UTC+2'), undefined, 'other languages are not guessed')
  assert.equal(takeoutTime('Jan 1, 2024, 12:00:00 PM Mars/Olympus'), undefined)
})

test('youtube: importing a Takeout twice stores nothing new', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('youtube')
  const zip = await writeZipExport(dir, 'takeout.zip', { ...youtubeTakeout('html', WATCHES, SEARCHES), ...playlistsNow(), 'Takeout/YouTube and YouTube Music/comments/comments.csv': commentsCsv('current') })
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const first = await runImport({ connector, source: zip, submit })
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored]), [
    ['youtube.history', 3], ['youtube.searches', 2], ['youtube.subscriptions', 1], ['youtube.playlists', 1], ['youtube.likes', 1], ['youtube.comments', 1]
  ])
  assert.deepEqual(first.skipped, [{ path: 'Takeout/archive_browser.html', reason: "Takeout's index page of the archive" }])
  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: 9, stored: 0, duplicate: 9, rejected: 0, waiting: 0 })
})

test('youtube: Google Ads clicks in the search history are left out, never stored as searches', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('youtube')
  const at = new Date('2024-07-02T12:00:00Z')
  const files = {
    'Takeout/YouTube and YouTube Music/history/search-history.json': [...adClicksJson(at), ...searchJson(SEARCHES.slice(0, 1)),
      // an ad click without the details line still says "Visited"
      { header: 'YouTube', title: 'Visited https://shop.example/?gclid=Cj0KCQ', titleUrl: 'https://shop.example/?gclid=Cj0KCQ', time: at.toISOString(), products: ['YouTube'] }]
  }
  const r = await readItems(connector, await writeZipExport(dir, 'ads.zip', files))
  await assertItemsValid(r.items)
  assert.deepEqual(r.items.map((i) => i.data), [{ month: '2024-07', searches: [{ query: 'pain au levain recette', searchedAt: '2024-07-02T19:00:00.000Z', url: 'https://www.youtube.com/results?search_query=pain+au+levain+recette' }] }])
  assert.ok(r.notes.includes('2 Google Ads click(s) ("Visited …") in search-history left out: they are not searches and their links carry advertising ids'), r.notes.join('\n'))
  assert.doesNotMatch(JSON.stringify(r.items), /Visited|googleadservices|gclid|AdvertisingId/)

  const html = await readItems(connector, await writeZipExport(dir, 'ads-html.zip', {
    'Takeout/YouTube and YouTube Music/history/search-history.html': searchHtml(SEARCHES).replace('<div class="outer-cell',
      '<div class="outer-cell mdl-cell"><div class="mdl-grid"><div class="header-cell mdl-cell"><p class="mdl-typography--title">YouTube<br></p></div>' +
      '<div class="content-cell mdl-cell mdl-typography--body-1">Visited&nbsp;<a href="https://www.googleadservices.com/pagead/aclk?ai=DChcSEwi">Boulangerie</a><br>Jul 2, 2024, 2:00:00\u202fPM CEST<br></div>' +
      '<div class="content-cell mdl-cell mdl-typography--body-1 mdl-typography--text-right"></div>' +
      '<div class="content-cell mdl-cell mdl-typography--caption"><b>Products:</b><br>&emsp;YouTube<br><b>Details:</b><br>&emsp;From Google Ads<br></div></div></div><div class="outer-cell')
  }))
  assert.equal(html.items.flatMap((i) => i.data.searches as unknown[]).length, 2)
  assert.doesNotMatch(JSON.stringify(html.items), /Visited|googleadservices/)
  assert.ok(html.notes.some((n) => n.startsWith('1 Google Ads click(s)')), html.notes.join('\n'))
})

test('youtube: playlists and liked videos in the 2024 and the 2020–2023 layouts; comments in three column orders', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('youtube')
  const now = await readItems(connector, await writeZipExport(dir, 'now.zip', {
    ...playlistsNow(),
    'Takeout/YouTube and YouTube Music/comments/comments.csv': commentsCsv('current'),
    'Takeout/YouTube and YouTube Music/comments/comments(1).csv': commentsCsv('mid2024'),
    'Takeout/YouTube and YouTube Music/channels/channel.csv': 'Channel ID,Channel Title (Original),Channel Visibility\nUCxxxxxxxxxxxxxxxxxxxxx0,Me,Public\n',
    'Takeout/YouTube and YouTube Music/video metadata/videos.csv': 'Video ID,Title\n',
    'Takeout/YouTube and YouTube Music/live chats/live chats.csv': 'Live Chat ID\n',
    'Takeout/YouTube and YouTube Music/shorts/new-2027-thing.json': '{}'
  }))
  await assertItemsValid(now.items)
  const byScope = (scope: string): Array<Record<string, unknown>> => now.items.filter((i) => i.scope === scope).map((i) => i.data)
  assert.deepEqual(byScope('youtube.playlists'), [{ playlists: [
    { title: 'Recettes, desserts 🍰', id: 'PLxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx1', visibility: 'Private', createdAt: '2024-03-01T10:00:00.000Z', updatedAt: '2024-03-02T10:00:00.000Z',
      videos: [{ videoId: 'aaaaaaaaaa1', addedAt: '2024-03-01T10:05:00.000Z' }, { videoId: 'aaaaaaaaaa2', addedAt: '2024-03-01T10:06:00.500Z' }] },
    { title: 'Watch later', id: 'WL', visibility: 'Private', createdAt: '2015-01-01T00:00:00.000Z', updatedAt: '2024-05-01T00:00:00.000Z', videos: [] }
  ] }])
  assert.deepEqual(byScope('youtube.likes'), [{ videos: [{ videoId: 'bbbbbbbbbb1', likedAt: '2024-04-30T21:00:00.000Z' }] }])
  assert.deepEqual(now.items.filter((i) => i.scope === 'youtube.comments').map((i) => [i.collectedAt, i.data]), [
    ['2024-07-14T07:39:35.956Z', { month: '2024-07', comments: [{ id: 'Ugy0000000000000000000003', text: '> quoted\nand my answer', commentedAt: '2024-07-14T07:39:35.956Z', videoId: 'aaaaaaaaaa3' }] }],
    ['2025-02-12T08:00:00.000Z', { month: '2025-02', comments: [
      { id: 'Ugz0000000000000000000005', text: 'plain text comment', commentedAt: '2025-02-12T08:00:00.000Z', postId: 'UgkxPost000000000000000000' },
      { id: 'Ugz0000000000000000000004', text: '@someone thanks!', commentedAt: '2025-02-11T19:04:00.000Z', videoId: 'aaaaaaaaaa4' }
    ] }]
  ])
  assert.ok(now.notes.includes('1 comment(s) without an id, a time or text left out'))
  assert.doesNotMatch(JSON.stringify(now.items), /UCxxxxxxxxxxxxxxxxxxxxx0|UCyyyy/, 'the account\'s channel id and mentioned channel ids are not kept')
  assert.deepEqual(now.skipped.map((s) => [s.path.replace('Takeout/YouTube and YouTube Music/', ''), s.reason]), [
    ['channels/channel.csv', "your channel's settings: not imported yet"],
    ['live chats/live chats.csv', 'live-chat messages: not imported yet'],
    ['video metadata/videos.csv', "your uploaded videos' details: not imported yet"]
  ], 'shorts/new-2027-thing.json is unknown: the import asks for a report')

  const old = await readItems(connector, await writeZipExport(dir, 'blocks.zip', { ...playlistsBlocks(), 'Takeout/YouTube and YouTube Music/comments/comments.csv': commentsCsv('old') }))
  await assertItemsValid(old.items)
  assert.deepEqual(old.items.filter((i) => i.scope !== 'youtube.comments').map((i) => i.data), [
    { playlists: [{ title: 'Road trip', id: 'PLxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx2', visibility: 'Public', description: 'Best of', createdAt: '2021-01-01T00:00:00.000Z', updatedAt: '2021-06-01T00:00:00.000Z', videos: [{ videoId: 'ccccccccccc', addedAt: '2021-02-03T04:05:06.000Z' }] }] },
    { videos: [{ videoId: 'ddddddddddd', likedAt: '2021-03-04T05:06:07.000Z' }] }
  ])
  const comments = old.items.filter((i) => i.scope === 'youtube.comments').flatMap((i) => (i.data as { comments: Array<{ text: string; parentId?: string }> }).comments)
  assert.deepEqual(comments.map((c) => [c.text, c.parentId]), [['Line one, with a comma\nline two', 'Ugx0000000000000000000009'], ['Superbe recette, merci ! 🍰', undefined]])

  // a header in another language: the columns by their known order
  const french = commentsCsv('old').replace(/^[^\n]*/, 'ID du commentaire,ID de la chaîne,Horodatage,Prix,ID parent,ID vidéo,Texte')
  const fr = await readItems(connector, await writeZipExport(dir, 'fr.zip', { 'Takeout/YouTube and YouTube Music/comments/comments.csv': french }))
  assert.equal(fr.items.flatMap((i) => i.data.comments as unknown[]).length, 2)
  const again = await readItems(connector, await writeZipExport(dir, 'now-again.zip', { ...playlistsNow(), 'Takeout/YouTube and YouTube Music/comments/comments.csv': commentsCsv('current') }))
  assert.deepEqual(again.items.filter((i) => i.scope === 'youtube.likes'), now.items.filter((i) => i.scope === 'youtube.likes'), 'the same export gives the same items')
})
