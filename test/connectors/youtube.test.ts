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
import { CHANNELS, searchHtml, watchJson, youtubeTakeout, type Search, type Watch } from './fixtures/youtube.js'

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
  for (const r of [fromJson, fromHtml]) {
    await assertItemsValid(r.items)
    assert.deepEqual(r.notes, [])
    assert.deepEqual(r.skipped, [])
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
    'Takeout/YouTube/playlists/Watch later.json': '{"broken": '
  }
  const r = await readItems(connector, await writeZipExport(dir, 'old.zip', files))
  await assertItemsValid(r.items)
  assert.deepEqual(r.items.map((i) => i.scope), ['youtube.history', 'youtube.searches', 'youtube.subscriptions'])
  assert.deepEqual(r.notes, [
    '2 watch-history entr(y/ies) without a readable time, or from another product, left out',
    '1 search-history entr(y/ies) without a readable time, or from another product, left out'
  ])
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
  const zip = await writeZipExport(dir, 'takeout.zip', youtubeTakeout('html', WATCHES, SEARCHES))
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const first = await runImport({ connector, source: zip, submit })
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored]), [['youtube.history', 3], ['youtube.searches', 2], ['youtube.subscriptions', 1]])
  assert.deepEqual(first.skipped, [{ path: 'Takeout/archive_browser.html', reason: 'not read: the youtube connector does not know this file (plugins/README.md says how to report a layout)' }])
  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: 6, stored: 0, duplicate: 6, rejected: 0, waiting: 0 })
})
