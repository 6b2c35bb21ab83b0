// @ts-check
// Rows of Reddit's data export CSVs → Hearth's shapes. Pure: no I/O. Columns are found by their
// header name (Reddit writes English headers and has added columns over the years):
//   posts.csv           id,permalink,date,ip,subreddit,gildings,title,url,body
//   comments.csv        id,permalink,date,ip,subreddit,gildings,link,parent,body[,media]
//                       (2019–2020: gildings_silver,gildings_supergold after gildings)
//   saved_posts.csv, saved_comments.csv, hidden_posts.csv   id,permalink
//   post_votes.csv, comment_votes.csv                       id,permalink,direction
//   subscribed_subreddits.csv                               subreddit
// Dates are "2024-01-15 10:30:00 UTC"; permalinks are full URLs or paths ("/r/x/comments/…").
// The ip column is never read.
import { optional, text } from '../_shared/read.js'

const ID = /^[a-z0-9]{1,16}$/

/** "2024-01-15 10:30:00 UTC" (or ISO) → ISO 8601 UTC, else undefined. @param {string | undefined} v */
export function redditTime (v) {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?( UTC|Z|\+00:00)?$/.exec((v ?? '').trim())
  if (m === null) return undefined
  const iso = `${m[1]}T${m[2]}Z`
  return Number.isNaN(Date.parse(iso)) ? undefined : iso
}

/** A full https link for a permalink or path on reddit.com, else undefined. @param {string | undefined} v */
export function redditLink (v) {
  const s = (v ?? '').trim()
  if (/^\/(r|u|user)\/\S+$/.test(s)) return `https://www.reddit.com${s}`
  return /^https:\/\/(www\.|old\.|new\.)?reddit\.com\/\S+$/.test(s) ? s : undefined
}

/** @param {string | undefined} v */
function httpUrl (v) { const s = (v ?? '').trim(); return /^https?:\/\/\S+$/.test(s) ? s : undefined }

/** @param {string | undefined} v */
function gildings (v) { const n = Number((v ?? '').trim()); return Number.isSafeInteger(n) && n > 0 ? n : undefined }

/** id, permalink and time every post and comment row has; null without them. @param {Record<string, string>} r */
function common (r) {
  const id = (r.id ?? '').trim()
  const permalink = redditLink(r.permalink)
  const createdAt = redditTime(r.date)
  const subreddit = text(r.subreddit?.trim())
  if (!ID.test(id) || permalink === undefined || createdAt === undefined || subreddit === undefined) return null
  return { id, permalink, createdAt, subreddit }
}

/** @param {Record<string, string>} r */
export function toPost (r) {
  const c = common(r)
  if (c === null) return null
  const total = (gildings(r.gildings) ?? 0) + (gildings(r.gildings_silver) ?? 0) + (gildings(r.gildings_supergold) ?? 0)
  return {
    ...c,
    title: r.title ?? '',
    ...optional('url', httpUrl(r.url)),
    ...optional('body', text(r.body)),
    ...optional('gildings', total > 0 ? total : undefined)
  }
}

/** @param {Record<string, string>} r */
export function toComment (r) {
  const c = common(r)
  if (c === null) return null
  const total = (gildings(r.gildings) ?? 0) + (gildings(r.gildings_silver) ?? 0) + (gildings(r.gildings_supergold) ?? 0)
  const parent = (r.parent ?? '').trim()
  return {
    ...c,
    body: r.body ?? '',
    ...optional('post', redditLink(r.link) ?? httpUrl(r.link)),
    ...optional('parent', /^t[13]_[a-z0-9]{1,16}$/.test(parent) ? parent : undefined),
    ...optional('media', httpUrl(r.media)),
    ...optional('gildings', total > 0 ? total : undefined)
  }
}

/** A saved or hidden item, or null. @param {Record<string, string>} r @param {'post' | 'comment'} kind */
export function toReference (r, kind) {
  const id = (r.id ?? '').trim()
  if (!ID.test(id)) return null
  return { kind, id, ...optional('permalink', redditLink(r.permalink)) }
}

/** A vote, or null; "none" is a vote taken back. @param {Record<string, string>} r @param {'post' | 'comment'} kind */
export function toVote (r, kind) {
  const ref = toReference(r, kind)
  const direction = (r.direction ?? '').trim().toLowerCase()
  if (ref === null || !['up', 'down', 'none'].includes(direction)) return null
  return { ...ref, direction }
}
