import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { redditLink, redditTime } from '../../plugins/reddit/rows.js'
import { runImport } from '../../src/connectors/import.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { EXPORT_TIME, writeBothExports, writeZipExport } from './fixtures/exports.js'
import { csv, EMAIL, IP, PHONE, redditExport } from './fixtures/reddit.js'
import { assertItemsValid, readItems, SCHEMAS_DIR, shippedConnector } from './fixtures/run.js'

const EXPORTED = EXPORT_TIME.toISOString().replace('.000Z', 'Z')
const R = 'https://www.reddit.com'

test('reddit: the 2019 and 2024 exports give posts and comments by month, saved items, votes and subscriptions', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('reddit')
  const results = []
  for (const layout of ['2019', '2024'] as const) {
    const { zip, folder } = await writeBothExports(dir, `reddit-${layout}`, redditExport(layout))
    const r = await readItems(connector, zip)
    assert.deepEqual((await readItems(connector, folder)).items, r.items, `${layout}: the folder reads as the zip`)
    await assertItemsValid(r.items)
    assert.deepEqual(r.notes, [
      '1 row(s) of comments.csv without an id, permalink, date or subreddit left out',
      '1 row(s) without an id, or with an unknown vote direction, left out of reddit.votes'
    ], layout)
    assert.ok(!r.skipped.some((s) => /does not know/.test(s.reason)), `${layout}: every file is known`)
    assert.doesNotMatch(JSON.stringify(r.items), new RegExp(`${IP.replace(/\./g, '\\.')}|${EMAIL}|${PHONE.replace('+', '\\+')}|jane_doe`), `${layout}: no IP address, e-mail, phone or username`)
    results.push(r)
  }
  const [old, recent] = results
  assert.deepEqual(recent!.items.map((i) => [i.scope, i.data.month ?? '', i.collectedAt, i.label]), [
    ['reddit.posts', '2023-11', '2023-11-20T23:59:59Z', '2023-11: 1 posts'],
    ['reddit.posts', '2024-01', '2024-01-04T10:00:00Z', '2024-01: 2 posts'],
    ['reddit.comments', '2023-12', '2023-12-24T18:00:00Z', '2023-12: 1 comments'],
    ['reddit.comments', '2024-01', '2024-01-03T10:00:00Z', '2024-01: 1 comments'],
    ['reddit.comments', '2024-02', '2024-02-01T00:00:00Z', '2024-02: 1 comments'],
    ['reddit.saved', '', EXPORTED, '2 saved items'],
    ['reddit.votes', '', EXPORTED, '3 votes'],
    ['reddit.subscriptions', '', EXPORTED, '3 subreddits']
  ])
  assert.deepEqual(recent!.items[1]!.data.posts, [
    { id: '18x0ab1', permalink: `${R}/r/Sourdough/comments/18x0ab1/x/`, createdAt: '2024-01-03T09:00:00Z', subreddit: 'Sourdough', title: 'First loaf, "finally"', body: 'Any tips?\nHydration 75%, 2 folds.' },
    { id: '18y1cd2', permalink: `${R}/r/pics/comments/18y1cd2/x/`, createdAt: '2024-01-04T10:00:00Z', subreddit: 'pics', title: 'Tokyo at night 🌃', url: 'https://i.redd.it/abc.jpg', gildings: 2 }
  ], 'oldest first; quotes, commas and line breaks survive')
  assert.equal((recent!.items[0]!.data.posts as Array<{ permalink: string }>)[0]!.permalink, `${R}/r/AskHistorians/comments/17q9zz0/x/`, 'a permalink given as a path becomes a link')
  assert.deepEqual(recent!.items[3]!.data.comments, [{
    id: 'kg1ab2c', permalink: `${R}/r/Sourdough/comments/18x0ab1/first_loaf/kg1ab2c/`, createdAt: '2024-01-03T10:00:00Z', subreddit: 'Sourdough',
    body: 'Thanks, all — "stretch and fold", got it,\nwill try.', post: `${R}/r/Sourdough/comments/18x0ab1/first_loaf/`, parent: 't3_18x0ab1', gildings: 1
  }])
  assert.equal((recent!.items[4]!.data.comments as Array<{ media?: string }>)[0]!.media, 'https://i.redd.it/gif123.gif')
  assert.deepEqual(recent!.items[6]!.data.votes, [
    { kind: 'post', id: '18zzzz1', permalink: `${R}/r/Baking/comments/18zzzz1/croissants/`, direction: 'up' },
    { kind: 'post', id: '18zzzz2', permalink: `${R}/r/pics/comments/18zzzz2/x/`, direction: 'down' },
    { kind: 'comment', id: 'kg9zzz1', permalink: `${R}/r/Baking/comments/18zzzz1/croissants/kg9zzz1/`, direction: 'none' }
  ])
  assert.deepEqual(recent!.items[7]!.data, { subreddits: ['Sourdough', 'AskHistorians', 'de'] })
  // 2019: silver and gold gildings added up; no saved_comments.csv, so only the saved post
  const oldComments = old!.items.filter((i) => i.scope === 'reddit.comments').flatMap((i) => i.data.comments as Array<Record<string, unknown>>)
  assert.deepEqual(oldComments.map((c) => c.gildings), [undefined, 1, undefined])
  assert.deepEqual(old!.items.find((i) => i.scope === 'reddit.saved')!.data, { saved: [{ kind: 'post', id: '18zzzz1', permalink: `${R}/r/Baking/comments/18zzzz1/croissants/` }] })
  const reasons = Object.fromEntries(recent!.skipped.map((s) => [s.path.replace(/^[^/]+\//, ''), s.reason]))
  assert.match(reasons['ip_logs.csv'] ?? '', /IP addresses, contact details/)
  assert.match(reasons['statistics.csv'] ?? '', /IP addresses, contact details/)
  assert.match(reasons['linked_phone_number.csv'] ?? '', /IP addresses, contact details/)
  assert.match(reasons['messages_archive.csv'] ?? '', /private messages and chats: not imported yet/)
  assert.match(reasons['post_headers.csv'] ?? '', /without their text/)
  assert.match(reasons['purchases.csv'] ?? '', /payments/)
  assert.match(reasons['hidden_posts.csv'] ?? '', /does not import yet/)
})

test('reddit: a broken or foreign CSV is listed with the reason and the rest imported; importing again stores nothing new', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('reddit')
  const files = redditExport('2019')
  Object.assign(files, {
    'comments.csv': String(files['comments.csv']).replace(/\r\n$/, '') + '\r\nkz1,x,2024-03-01 00:00:00 UTC,,x,0,0,0,,,"never closed\r\n', // a quote left open
    'posts.csv': csv(['Comment ID', 'Channel ID', 'Comment Create Timestamp', 'Comment Text'], [['Ug1', 'UCa', '2024-03-14T09:00:00Z', 'a YouTube comment']]),
    'subscribed_subreddits.csv': '"Sourdough\r\n' + 'x'.repeat(1024 * 1024 + 10) // a row past 1 MiB
  })
  const zip = await writeZipExport(dir, 'broken.zip', files)
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const first = await runImport({ connector, source: zip, submit })
  assert.deepEqual(first.rejected, [])
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored]), [['reddit.posts', 0], ['reddit.comments', 3], ['reddit.saved', 1], ['reddit.votes', 1], ['reddit.subscriptions', 0]])
  const skipped = Object.fromEntries(first.skipped.map((s) => [s.path, s.reason]))
  assert.match(skipped['comments.csv']!, /^not readable as CSV: .*quote.* \(the 4 row\(s\) before were read\)$/i)
  assert.match(skipped['posts.csv']!, /not Reddit's posts\.csv/)
  assert.match(skipped['subscribed_subreddits.csv']!, /not readable as CSV: .*(size|record)/i)
  assert.ok(!first.skipped.some((s) => /does not know/.test(s.reason)))
  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: first.total.items, stored: 0, duplicate: first.total.items, rejected: 0, waiting: 0 })
})

test('reddit: times and permalinks', () => {
  assert.equal(redditTime('2024-01-15 10:30:00 UTC'), '2024-01-15T10:30:00Z')
  assert.equal(redditTime('2024-01-15T10:30:00Z'), '2024-01-15T10:30:00Z')
  assert.equal(redditTime('2024-13-45 10:30:00 UTC'), undefined)
  assert.equal(redditTime('15/01/2024'), undefined)
  assert.equal(redditLink('/r/de/comments/abc/x/'), 'https://www.reddit.com/r/de/comments/abc/x/')
  assert.equal(redditLink('https://old.reddit.com/r/de/comments/abc/x/'), 'https://old.reddit.com/r/de/comments/abc/x/')
  assert.equal(redditLink('javascript:alert(1)'), undefined)
  assert.equal(redditLink('https://evil.example/r/de'), undefined)
})
