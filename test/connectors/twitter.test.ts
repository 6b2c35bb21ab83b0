import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { snowflakeTime, xTime } from '../../plugins/twitter/tweets.js'
import { runImport } from '../../src/connectors/import.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { EXPORT_TIME, writeBothExports, writeZipExport } from './fixtures/exports.js'
import { assertItemsValid, readItems, SCHEMAS_DIR, shippedConnector } from './fixtures/run.js'
import { FRIEND_ID, OTHER_ID, OWNER_ID, PRIVATE, twitterArchive, ytd } from './fixtures/twitter.js'

const EXPORTED = EXPORT_TIME.toISOString().replace('.000Z', 'Z')
const NOTES = [
  '1 tweet entr(y/ies) without an id, time or text left out',
  '1 like entr(y/ies) without a tweet id left out',
  '1 direct message entr(y/ies) without a time or sender left out'
]
const follower = (id: string): Record<string, string> => ({ accountId: id, url: `https://twitter.com/intent/user?user_id=${id}` })

test('twitter: the 2019, 2021 and 2024 archive layouts give the same tweets, likes, messages and follows', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('twitter')
  const results = []
  for (const layout of ['2019', '2021', '2024'] as const) {
    const { zip, folder } = await writeBothExports(dir, `twitter-${layout}`, twitterArchive(layout))
    const r = await readItems(connector, zip)
    assert.deepEqual((await readItems(connector, folder)).items, r.items, `${layout}: the folder reads as the zip`)
    await assertItemsValid(r.items)
    assert.deepEqual(r.notes, NOTES, layout)
    assert.ok(!r.skipped.some((s) => /does not know/.test(s.reason)), `${layout}: every file of the archive is known`)
    results.push(r)
  }
  const [old, middle, recent] = results
  const tweets = (r: typeof old): Array<Record<string, unknown>> => r!.items.filter((i) => i.scope === 'twitter.tweets').flatMap((i) => i.data.tweets as Array<Record<string, unknown>>)
  const withoutFile = (list: Array<Record<string, unknown>>): unknown => JSON.parse(JSON.stringify(list), (k, v) => k === 'file' ? undefined : v)
  assert.deepEqual(withoutFile(tweets(old)), withoutFile(tweets(middle)), 'bare (2019) and wrapped tweet entries read alike')
  assert.deepEqual(tweets(recent).filter((tw) => tw.deletedAt === undefined), tweets(middle).map((tw) => tw.media === undefined ? tw : { ...tw, media: [{ ...(tw.media as object[])[0], file: 'data/tweets_media/1757000000000000005-GGbread1.jpg' }] }),
    'tweets.js split in two parts gives the tweets of tweet.js')
  assert.deepEqual(recent!.items.map((i) => [i.scope, i.data.month ?? i.data.posted ?? '', i.collectedAt]), [
    ['twitter.tweets', '2023-12', '2023-12-31T23:30:00.000Z'],
    ['twitter.tweets', '2024-01', '2024-01-03T09:15:00.000Z'],
    ['twitter.tweets', '2024-02', '2024-02-21T07:00:00.000Z'],
    ['twitter.likes', '2023-12', '2023-12-30T07:35:20.872Z'],
    ['twitter.likes', '2024-02', '2024-02-12T17:50:59.996Z'],
    ['twitter.likes', 'before-2010-11', '2010-11-04T01:42:54.657Z'],
    ['twitter.directMessages', '2024-01', '2024-01-05T10:00:00.000Z'],
    ['twitter.directMessages', '2024-01', '2024-01-02T09:00:00.000Z'],
    ['twitter.directMessages', '2024-02', '2024-02-12T19:00:00.000Z'],
    ['twitter.followers', '', EXPORTED],
    ['twitter.following', '', EXPORTED]
  ])
  const january = recent!.items[1]!.data.tweets as Array<Record<string, unknown>>
  assert.deepEqual(january.map((tw) => [tw.replyTo, tw.quotes, tw.retweetOf]), [
    [{ tweetId: '1741900000000000009', userId: FRIEND_ID, screenName: 'friend_zoe' }, undefined, undefined],
    [undefined, { tweetId: '1742050000000000777', screenName: 'someone' }, undefined],
    [undefined, undefined, { screenName: 'nasa' }]
  ], 'a reply, a quote and a retweet')
  assert.deepEqual(recent!.items[0]!.data.tweets, [{
    id: '1741598000000000001', createdAt: '2023-12-31T23:30:00.000Z', text: 'Bonne année 🎉 & see you in 2024 <3 #NewYear', lang: 'fr',
    client: 'Twitter Web App', hashtags: ['NewYear'], likeCount: 12, retweetCount: 3
  }], 'text unescaped, counts as numbers, the client without its link')
  assert.deepEqual((recent!.items[2]!.data.tweets as unknown[]), [
    {
      id: '1757000000000000005', createdAt: '2024-02-12T18:45:30.000Z', text: 'Sourdough day 🍞 https://t.co/PhOtO12345', lang: 'en', likeCount: 5, retweetCount: 0,
      media: [{ type: 'photo', url: 'https://pbs.twimg.com/media/GGbread1.jpg', id: '1757000000000000100', file: 'data/tweets_media/1757000000000000005-GGbread1.jpg', altText: 'A loaf of bread' }]
    },
    { id: '1760000000000000007', createdAt: '2024-02-21T07:00:00.000Z', text: 'oops, typo', lang: 'en', likeCount: 0, retweetCount: 0, deletedAt: '2024-02-22T07:00:00.000Z' }
  ].map((tw) => JSON.parse(JSON.stringify(tw))), 'media refer to the archive file; deleted tweets are kept and marked')
  assert.deepEqual(recent!.items[4]!.data, { posted: '2024-02', likes: [{ tweetId: '1757100000000000010', text: 'A thread about bread & butter', url: 'https://twitter.com/i/web/status/1757100000000000010' }] }, 'a like listed twice is kept once')
  assert.deepEqual(recent!.items[6]!.data, {
    conversationId: '1742500000000000400', group: true, month: '2024-01',
    messages: [{ at: '2024-01-04T10:00:00.000Z', id: '1742500000000000402', senderId: OTHER_ID, text: 'Hello all' }],
    events: [
      { kind: 'joined', at: '2024-01-04T08:00:00.000Z', by: FRIEND_ID },
      { kind: 'added', at: '2024-01-04T09:00:00.000Z', by: FRIEND_ID, userIds: [OTHER_ID] },
      { kind: 'renamed', at: '2024-01-05T10:00:00.000Z', by: FRIEND_ID, name: 'Bread club 🍞' }
    ]
  })
  assert.deepEqual(recent!.items[7]!.data.messages, [{
    at: '2024-01-02T09:00:00.000Z', id: '1742000000000000200', senderId: FRIEND_ID, recipientId: OWNER_ID, text: 'Voici la recette https://t.co/LiNk123456',
    urls: ['https://example.org/recette'], media: ['https://ton.twitter.com/dm/1742000000000000200/1742000000000000199/abc.jpg'],
    reactions: [{ senderId: OWNER_ID, reaction: 'like', at: '2024-01-02T09:01:00.000Z' }]
  }])
  assert.deepEqual(recent!.items[9]!.data, { accounts: [follower(FRIEND_ID), follower(OTHER_ID)] })
  assert.equal(old!.items.filter((i) => i.scope === 'twitter.directMessages').length, 2, 'the 2019 archive has no group messages')
})

test('twitter: e-mail, phone, IP addresses and device tokens never reach an item; the files holding them are listed with why', async (t) => {
  const dir = await tempDir(t)
  const r = await readItems(await shippedConnector('twitter'), await writeZipExport(dir, 'x.zip', twitterArchive('2024')))
  const all = JSON.stringify(r.items)
  for (const value of Object.values(PRIVATE)) assert.ok(!all.includes(value), `${value} is left out`)
  assert.ok(!all.includes('jane_doe'), 'the username of account.js is not copied')
  const reasons = Object.fromEntries(r.skipped.map((s) => [s.path, s.reason]))
  for (const file of ['account.js', 'phone-number.js', 'ip-audit.js', 'device-token.js']) assert.match(reasons[`data/${file}`] ?? '', /contact details, IP addresses, devices/)
  assert.match(reasons['data/ad-impressions.js'] ?? '', /advertising/)
  assert.match(reasons['data/block.js'] ?? '', /does not import yet/)
  assert.match(reasons['data/note-tweet.js'] ?? '', /not imported yet/)
  assert.match(reasons['data/direct-message-headers.js'] ?? '', /without their text/)
})

test('twitter: broken files are listed with the reason and the rest imported; importing again stores nothing new', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('twitter')
  const files = twitterArchive('2024')
  const deep = '{"a":'.repeat(600) + '1' + '}'.repeat(600)
  Object.assign(files, {
    'data/tweets-part1.js': String(files['data/tweets-part1.js']).slice(0, -40), // cut off inside the second tweet
    'data/like.js': JSON.stringify([{ like: { tweetId: '1757100000000000010' } }]), // JSON without the assignment
    'data/follower.js': `window.YTD.follower.part0 = [{"follower":{"accountId":"${FRIEND_ID}"}}, ${deep}, {"follower":{"accountId":"${OTHER_ID}"}}];\n`,
    'data/following.js': 'window.YTD.following.part0 = '
  })
  const zip = await writeZipExport(dir, 'broken.zip', files)
  const submit = daemonSubmit({ socketPath: server.socketPath })
  const first = await runImport({ connector, source: zip, submit })
  assert.deepEqual(first.rejected, [])
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored]), [
    ['twitter.tweets', 3], ['twitter.likes', 0], ['twitter.directMessages', 3], ['twitter.followers', 1], ['twitter.following', 0]
  ])
  const skipped = Object.fromEntries(first.skipped.map((s) => [s.path, s]))
  assert.match(skipped['data/tweets-part1.js']!.reason, /not valid JSON.*\(the 2 record\(s\) before the damage were read\)/)
  assert.match(skipped['data/like.js']!.reason, /not JSON assigned to a name/)
  assert.match(skipped['data/following.js']!.reason, /the file is empty/)
  assert.equal(skipped['data/follower.js $[1]']!.errorCode, 'JSON_TOO_DEEP')
  assert.ok(!first.skipped.some((s) => /does not know/.test(s.reason)), 'no known file is reported as unknown')
  const again = await runImport({ connector, source: zip, submit })
  assert.deepEqual(again.total, { items: first.total.items, stored: 0, duplicate: first.total.items, rejected: 0, waiting: 0 })
})

test('twitter: followers past 50,000 come in parts of one snapshot', async (t) => {
  const dir = await tempDir(t)
  const ids = Array.from({ length: 50_001 }, (_, i) => String(1_400_000_000_000_000_000n + BigInt(i)))
  const zip = await writeZipExport(dir, 'big.zip', { 'data/follower.js': ytd('follower', ids.map((accountId) => ({ follower: { accountId } }))) })
  const { items } = await readItems(await shippedConnector('twitter'), zip)
  await assertItemsValid(items)
  assert.deepEqual(items.map((i) => [i.scope, i.collectedAt, (i.data.accounts as unknown[]).length, i.data.part, i.data.parts]), [
    ['twitter.followers', EXPORTED, 50_000, 1, 2],
    ['twitter.followers', EXPORTED, 1, 2, 2]
  ])
})

test('twitter: X times and tweet ids', () => {
  assert.equal(xTime('Wed Oct 10 20:19:24 +0000 2018'), '2018-10-10T20:19:24.000Z')
  assert.equal(xTime('Wed Oct 10 22:19:24 +0200 2018'), '2018-10-10T20:19:24.000Z')
  assert.equal(xTime('2019-01-01T12:00:00.000Z'), '2019-01-01T12:00:00.000Z')
  assert.equal(xTime('Wed Foo 10 20:19:24 +0000 2018'), undefined)
  assert.equal(xTime('yesterday'), undefined)
  assert.equal(snowflakeTime('1757100000000000010'), '2024-02-12T17:50:59.996Z')
  assert.equal(snowflakeTime('20'), undefined, 'ids before November 2010 carry no time')
  assert.equal(snowflakeTime('12ab'), undefined)
})
