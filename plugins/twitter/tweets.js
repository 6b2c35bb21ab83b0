// @ts-check
// X (Twitter) archive records → Hearth's tweet and like shapes. Pure: no I/O.
//   tweets.js / tweet.js entries  {"tweet": {"id_str", "created_at": "Wed Oct 10 20:19:24 +0000 2018",
//     "full_text", "lang", "source": "<a href…>Client</a>", "in_reply_to_status_id_str",
//     "in_reply_to_user_id_str", "in_reply_to_screen_name", "favorite_count": "3", "retweet_count",
//     "entities": {"hashtags": [{"text"}], "user_mentions": [{"screen_name", "id_str"}],
//     "urls": [{"url", "expanded_url"}]}, "extended_entities": {"media": [{"id_str", "type",
//     "media_url_https", "ext_alt_text"?}]}, "deleted_at"? (deleted-tweets.js)}}
//   (the first 2019 archives have the tweet's fields without the {"tweet": …} wrapper)
//   like.js entries  {"like": {"tweetId", "fullText"?, "expandedUrl"?}}  (no time: X does not say when)
import { isObject, optional, text } from '../_shared/read.js'

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const DIGITS = /^\d{1,20}$/
const STATUS_URL = /^https?:\/\/(?:www\.|mobile\.)?(?:twitter|x)\.com\/(\w{1,15})\/status(?:es)?\/(\d{1,20})(?:[/?#]|$)/i
/** Tweet ids since 2010-11-04 are snowflakes: milliseconds since this epoch, shifted left 22 bits. */
const SNOWFLAKE_EPOCH = 1288834974657n

/**
 * "Wed Oct 10 20:19:24 +0000 2018" (X's created_at) or ISO 8601 → ISO 8601 UTC, else undefined.
 * @param {unknown} v
 * @returns {string | undefined}
 */
export function xTime (v) {
  if (typeof v !== 'string') return undefined
  const m = /^\w{3} (\w{3}) (\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2}) (\d{4})$/.exec(v.trim())
  let ms
  if (m !== null) {
    const month = MONTHS.indexOf(/** @type {string} */ (m[1]))
    if (month < 0) return undefined
    const offset = (m[6] === '-' ? -1 : 1) * (Number(m[7]) * 60 + Number(m[8])) * 60_000
    ms = Date.UTC(Number(m[9]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) - offset
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/.test(v.trim())) {
    ms = Date.parse(v.trim())
  } else {
    return undefined
  }
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}

/**
 * When a tweet was posted, from its id (ids since November 2010 carry their time); undefined for
 * the older, sequential ids.
 * @param {string} id
 * @returns {string | undefined}
 */
export function snowflakeTime (id) {
  if (!DIGITS.test(id)) return undefined
  const ms = (BigInt(id) >> 22n) + SNOWFLAKE_EPOCH
  // sequential ids stopped near 3·10^10; snowflakes start past 2^40 (four minutes after their epoch)
  return BigInt(id) < 1n << 40n || ms > 8_640_000_000_000_000n ? undefined : new Date(Number(ms)).toISOString()
}

/** X escapes these three in tweet text, as HTML. @param {string} s */
function unescapeText (s) { return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') }

/** @param {unknown} v @returns {string | undefined} */
function id (v) { return typeof v === 'string' && DIGITS.test(v) ? v : typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : undefined }

/** @param {unknown} v @returns {number | undefined} counts are strings in archives since 2020 */
function count (v) {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

/** @param {unknown} v @returns {string | undefined} */
function httpUrl (v) { return typeof v === 'string' && /^https?:\/\/\S+$/.test(v) ? v : undefined }

/** @param {unknown} v @returns {Record<string, unknown>[]} */
function objects (v) { return Array.isArray(v) ? v.filter(isObject) : [] }

/**
 * One entry of tweets.js / tweet.js / deleted-tweets.js → a tweet, or null without id, time or text.
 * `mediaFile` names the archive file of a media item (tweets_media/<tweet>-<name>), when it is there.
 * @param {unknown} raw
 * @param {(tweetId: string, mediaUrl: string) => string | undefined} mediaFile
 */
export function toTweet (raw, mediaFile) {
  const t = isObject(raw) && isObject(raw.tweet) ? raw.tweet : raw
  if (!isObject(t)) return null
  const tweetId = id(t.id_str) ?? id(t.id)
  const createdAt = xTime(t.created_at)
  const fullText = typeof t.full_text === 'string' ? t.full_text : typeof t.text === 'string' ? t.text : undefined
  if (tweetId === undefined || createdAt === undefined || fullText === undefined) return null
  const entities = isObject(t.entities) ? t.entities : {}
  const urls = objects(entities.urls).flatMap((u) => {
    const url = httpUrl(u.url)
    return url === undefined ? [] : [{ url, ...optional('expandedUrl', httpUrl(u.expanded_url)) }]
  })
  const mentions = objects(entities.user_mentions).flatMap((m) => {
    const screenName = text(m.screen_name)
    return screenName === undefined ? [] : [{ screenName, ...optional('userId', id(m.id_str)) }]
  })
  const hashtags = objects(entities.hashtags).flatMap((h) => text(h.text) ?? [])
  const mediaList = objects(isObject(t.extended_entities) ? t.extended_entities.media : entities.media).flatMap((m) => {
    const url = httpUrl(m.media_url_https) ?? httpUrl(m.media_url)
    const type = text(m.type) ?? 'photo'
    if (url === undefined) return []
    return [{ type, url, ...optional('id', id(m.id_str)), ...optional('file', mediaFile(tweetId, url)), ...optional('altText', text(m.ext_alt_text)) }]
  })
  const body = unescapeText(fullText)
  const retweet = /^RT @(\w{1,15}):/.exec(body)
  const replyTo = {
    ...optional('tweetId', id(t.in_reply_to_status_id_str) ?? id(t.in_reply_to_status_id)),
    ...optional('userId', id(t.in_reply_to_user_id_str) ?? id(t.in_reply_to_user_id)),
    ...optional('screenName', text(t.in_reply_to_screen_name))
  }
  const quoted = quotedTweet(t, urls, replyTo.tweetId)
  return {
    id: tweetId,
    createdAt,
    text: body,
    ...optional('lang', text(t.lang)),
    ...optional('client', clientName(t.source)),
    ...(Object.keys(replyTo).length > 0 ? { replyTo } : {}),
    ...optional('quotes', quoted),
    ...(retweet !== null ? { retweetOf: { screenName: /** @type {string} */ (retweet[1]) } } : {}),
    ...(mentions.length > 0 ? { mentions } : {}),
    ...(hashtags.length > 0 ? { hashtags } : {}),
    ...(urls.length > 0 ? { urls } : {}),
    ...(mediaList.length > 0 ? { media: mediaList } : {}),
    ...optional('likeCount', count(t.favorite_count)),
    ...optional('retweetCount', count(t.retweet_count)),
    ...optional('deletedAt', xTime(t.deleted_at))
  }
}

/**
 * The quoted tweet: quoted_status_id_str when the archive has it, else the status link X appends
 * to a quote's text (a reply's link to its parent is not a quote).
 * @param {Record<string, unknown>} t @param {Array<Record<string, string | undefined>>} urls @param {string | undefined} parentId
 * @returns {{tweetId: string, screenName?: string} | undefined}
 */
function quotedTweet (t, urls, parentId) {
  const direct = id(t.quoted_status_id_str)
  if (direct !== undefined) return { tweetId: direct }
  for (const u of [...urls].reverse()) {
    const m = u.expandedUrl === undefined ? null : STATUS_URL.exec(u.expandedUrl)
    if (m !== null && m[2] !== parentId) return { tweetId: /** @type {string} */ (m[2]), screenName: /** @type {string} */ (m[1]) }
  }
  return undefined
}

/** `<a href="…" rel="nofollow">Twitter for iPhone</a>` → "Twitter for iPhone". @param {unknown} v */
function clientName (v) {
  if (typeof v !== 'string') return undefined
  return text(unescapeText(v.replace(/<[^>]*>/g, '')).trim())
}

/**
 * One entry of like.js → {tweetId, text?, url?}, or null without a tweet id.
 * @param {unknown} raw
 */
export function toLike (raw) {
  const l = isObject(raw) && isObject(raw.like) ? raw.like : undefined
  const tweetId = id(l?.tweetId)
  if (l === undefined || tweetId === undefined) return null
  return { tweetId, ...optional('text', typeof l.fullText === 'string' ? text(unescapeText(l.fullText)) : undefined), ...optional('url', httpUrl(l.expandedUrl)) }
}

/**
 * One entry of follower.js / following.js → {accountId, url?}, or null.
 * @param {unknown} raw @param {'follower' | 'following'} key
 */
export function toAccount (raw, key) {
  const a = isObject(raw) && isObject(raw[key]) ? raw[key] : undefined
  const accountId = id(a?.accountId)
  if (a === undefined || accountId === undefined) return null
  return { accountId, ...optional('url', httpUrl(a.userLink)) }
}
