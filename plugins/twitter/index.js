// @ts-check
// X (Twitter) "Download an archive of your data" → twitter.tweets, twitter.likes,
// twitter.directMessages, twitter.followers and twitter.following.
//
// Layouts read (files found by name under any folder):
//   2019       tweet.js, like.js, direct-message.js, follower.js, following.js at the archive's
//              root; tweet entries are the tweet's fields themselves; media in tweet_media/
//   2020–2022  data/tweet.js ({"tweet": {…}} entries), data/direct-messages.js,
//              data/direct-messages-group.js, data/tweet_media/, data/manifest.js
//   2022–      data/tweets.js, data/deleted-tweets.js, data/community-tweet.js, data/tweets_media/
//   large accounts split any of these into <name>-part1.js, -part2.js …
// Every data file is JavaScript, `window.YTD.<type>.part<N> = [ … ]`: each is streamed, entry by
// entry, never read whole.
//
// Tweets and direct messages are event logs: one item per calendar month (per conversation for
// messages), dated by its newest entry, so a later archive repeats the finished months unchanged.
// Likes carry no time, so they are grouped by the month the liked tweet was posted (its id says
// when) and dated by that month's newest liked tweet. Followers and following are snapshots
// dated source.exportedAt (split into parts past 50,000 accounts, to stay far below a request's size).
// Left out on purpose: the account's e-mail, phone, IP addresses, devices and connected apps,
// advertising data, and the archive's viewer (Your archive.html, assets/).

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { monthsAsTheyEnd, skipKnownFiles, snapshotParts, streamJsonOrSkip } from '../_shared/read.js'
import { toConversationMonths } from './messages.js'
import { snowflakeTime, toAccount, toLike, toTweet } from './tweets.js'
import { KNOWN_FILES } from './known-files.js'

const part = '(-part\\d+)?\\.js$'
const TWEET_FILES = new RegExp(`(^|/)(tweets?|community-tweet|deleted-tweets?)${part}`)
const LIKE_FILES = new RegExp(`(^|/)like${part}`)
const DM_FILES = new RegExp(`(^|/)direct-messages?(-group)?${part}`)
const FOLLOWER_FILES = new RegExp(`(^|/)follower${part}`)
const FOLLOWING_FILES = new RegExp(`(^|/)following${part}`)
const MEDIA_FOLDER = /(^|\/)tweets?_media\/(\d+)-([^/]+)$/
/** Accounts per followers/following item: ~80 bytes each, so a part stays near 4 MB. */
export const ACCOUNTS_PER_ITEM = 50_000
/**
 * Tweets held before the months the archive has moved past are handed out (it lists them newest
 * first): memory stays bounded however large tweets.js is.
 */
const MAX_HELD_TWEETS = 20_000
/** Likes of tweets older than November 2010: their ids carry no time. */
const BEFORE_SNOWFLAKES = 'before-2010-11'
const SNOWFLAKE_START = '2010-11-04T01:42:54.657Z'

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readTweets(source, opts)
    yield * readLikes(source, opts)
    yield * readMessages(source, opts)
    yield * readAccounts(source, opts, 'twitter.followers', FOLLOWER_FILES, 'follower')
    yield * readAccounts(source, opts, 'twitter.following', FOLLOWING_FILES, 'following')
    skipKnownFiles(source, opts, KNOWN_FILES)
  }
}

/**
 * The entries of every file matching `pattern`, part by part, streamed. `read.files` counts the
 * files read to their end (an empty list is read; a broken file is skipped with its reason).
 * @param {ExportSource} source @param {ReadOptions} opts @param {RegExp} pattern @param {{files: number}} [read]
 * @returns {AsyncGenerator<{file: string, entry: unknown}>}
 */
async function * entriesOf (source, opts, pattern, read = { files: 0 }) {
  for (const f of filesIn(source, pattern)) {
    let broken = false
    const watched = { ...opts, skip: (/** @type {string} */ path, /** @type {string} */ reason) => { broken = true; opts.skip(path, reason) } }
    for await (const entry of streamJsonOrSkip(source, f.path, watched, { jsAssignment: true })) yield { file: f.path, entry }
    if (!broken) read.files++
  }
}

/** Files in path order, so tweets.js comes before tweets-part1.js. @param {ExportSource} source @param {RegExp} pattern */
function filesIn (source, pattern) {
  return source.entries().filter((e) => pattern.test(e.path))
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readTweets (source, opts) {
  if (filesIn(source, TWEET_FILES).length === 0) { opts.note('no tweets.js (or tweet.js) in this archive: nothing for twitter.tweets'); return }
  /** @type {Map<string, string>} "<tweet id>-<media file name>" → archive path */
  const media = new Map()
  for (const e of source.entries()) {
    const m = MEDIA_FOLDER.exec(e.path)
    if (m !== null) media.set(`${m[2]}-${m[3]}`, e.path)
  }
  /** @param {string} tweetId @param {string} url */
  const mediaFile = (tweetId, url) => media.get(`${tweetId}-${url.slice(url.lastIndexOf('/') + 1)}`)
  const seen = new Set()
  const counts = { unreadable: 0 }
  // deleted tweets last: the others come newest first across tweets.js and its parts, which is
  // what lets months be handed out as the file moves past them (past 20,000 tweets a month with
  // deleted tweets may then come in two data files)
  const files = filesIn(source, TWEET_FILES).sort((a, b) => Number(/deleted-tweet/.test(a.path)) - Number(/deleted-tweet/.test(b.path)))
  for await (const [month, list] of monthsAsTheyEnd(tweetsOf(source, opts, files, mediaFile, seen, counts), (t) => t.createdAt, MAX_HELD_TWEETS)) {
    yield { scope: 'twitter.tweets', collectedAt: /** @type {string} */ (list.at(-1)?.createdAt), data: { month, tweets: list }, label: `${month}: ${list.length} tweets` }
  }
  if (counts.unreadable > 0) opts.note(`${counts.unreadable} tweet entr(y/ies) without an id, time or text left out`)
}

/**
 * The tweets of `files` in file order, each id once.
 * @param {ExportSource} source @param {ReadOptions} opts @param {import('../../src/connectors/types.js').ExportEntry[]} files
 * @param {(tweetId: string, url: string) => string | undefined} mediaFile @param {Set<string>} seen @param {{unreadable: number}} counts
 */
async function * tweetsOf (source, opts, files, mediaFile, seen, counts) {
  for (const f of files) {
    for await (const entry of streamJsonOrSkip(source, f.path, opts, { jsAssignment: true })) {
      const tweet = toTweet(entry, mediaFile)
      if (tweet === null) counts.unreadable++
      else if (!seen.has(tweet.id)) { seen.add(tweet.id); yield tweet }
    }
  }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readLikes (source, opts) {
  if (filesIn(source, LIKE_FILES).length === 0) { opts.note('no like.js in this archive: nothing for twitter.likes'); return }
  /** @type {Map<string, {newest: string, likes: NonNullable<ReturnType<typeof toLike>>[]}>} */
  const groups = new Map()
  const seen = new Set()
  let unreadable = 0
  for await (const { entry } of entriesOf(source, opts, LIKE_FILES)) {
    const like = toLike(entry)
    if (like === null) { unreadable++; continue }
    if (seen.has(like.tweetId)) continue
    seen.add(like.tweetId)
    const posted = snowflakeTime(like.tweetId)
    const key = posted?.slice(0, 7) ?? BEFORE_SNOWFLAKES
    const group = groups.get(key) ?? { newest: posted ?? SNOWFLAKE_START, likes: [] }
    if (posted !== undefined && posted > group.newest) group.newest = posted
    group.likes.push(like) // in the archive's order: most recently liked first
    groups.set(key, group)
  }
  if (unreadable > 0) opts.note(`${unreadable} like entr(y/ies) without a tweet id left out`)
  for (const [posted, { newest, likes }] of [...groups].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    yield { scope: 'twitter.likes', collectedAt: newest, data: { posted, likes }, label: `likes of tweets from ${posted}: ${likes.length}` }
  }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readMessages (source, opts) {
  if (filesIn(source, DM_FILES).length === 0) { opts.note('no direct-messages.js in this archive: nothing for twitter.directMessages'); return }
  let unreadable = 0
  for await (const { file, entry } of entriesOf(source, opts, DM_FILES)) {
    const { months, unreadable: bad } = toConversationMonths(entry, /-group/.test(file))
    unreadable += bad
    for (const { last, ...data } of months) {
      yield { scope: 'twitter.directMessages', collectedAt: last, data, label: `conversation ${data.conversationId} ${data.month}: ${data.messages.length} messages` }
    }
  }
  if (unreadable > 0) opts.note(`${unreadable} direct message entr(y/ies) without a time or sender left out`)
}

/**
 * @param {ExportSource} source @param {ReadOptions} opts @param {string} scope @param {RegExp} pattern @param {'follower' | 'following'} key
 * @returns {AsyncGenerator<ConnectorItem>}
 */
async function * readAccounts (source, opts, scope, pattern, key) {
  if (filesIn(source, pattern).length === 0) { opts.note(`no ${key}.js in this archive: nothing for ${scope}`); return }
  const accounts = []
  const seen = new Set()
  const read = { files: 0 }
  for await (const { entry } of entriesOf(source, opts, pattern, read)) {
    const a = toAccount(entry, key)
    if (a !== null && !seen.has(a.accountId)) { seen.add(a.accountId); accounts.push(a) }
  }
  if (read.files === 0) return // every file broken: no snapshot saying "none"
  yield * snapshotParts({ scope, collectedAt: source.exportedAt, key: 'accounts', noun: 'accounts', perItem: ACCOUNTS_PER_ITEM }, accounts)
}
