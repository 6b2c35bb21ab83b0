// @ts-check
// The comments a YouTube account wrote, from Google Takeout → youtube.comments.
//
// comments/comments.csv (split into comments(1).csv, … when large), in the column orders Takeout
// has shipped:
//   before mid-2024  Comment ID,Channel ID,Comment Create Timestamp,Price,Parent Comment ID,Video ID,Comment Text
//   mid-2024         Channel ID,Comment Create Timestamp,Price,Comment ID,Parent Comment ID,Video ID,Comment Text
//   2025 and later   Comment ID,Channel ID,Comment create timestamp,Price,Parent comment ID,Post ID,Video ID,
//                    Comment text,Top-level comment ID
// Columns are found by their English header; in another language, by those known orders. The
// text is plain, or the segments Takeout wraps it in: {"takeoutSegments":[{"text":…}]} (before
// mid-2024) or {"text":…},{"text":…} (since). The Channel ID is the account's own and is left
// out; so is Price (Super Chat amounts).
//
// An event log like the watch history: one item per calendar month (UTC), newest first, dated by
// the month's newest comment, so a later export only adds the months that grew.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */
/** @typedef {{id: string, text: string, commentedAt: string, videoId?: string, postId?: string, parentId?: string}} Comment */

import { byMonth, isObject, optional, text } from '../_shared/read.js'
import { readCsvOrSkip, takeoutIsoTime } from './csv.js'

const FILES = /(^|\/)comments\/comments(\(\d+\))?\.csv$/
/** Column positions of each known order, by its number of columns and how its first cell looks. */
const ORDERS = {
  old: { id: 0, time: 2, parent: 4, video: 5, text: 6 },
  mid2024: { id: 3, time: 1, parent: 4, video: 5, text: 6 },
  current: { id: 0, time: 2, parent: 4, post: 5, video: 6, text: 7 }
}
/** @typedef {{id: number, time: number, parent: number, video: number, text: number, post?: number}} Columns */

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
export async function * readComments (source, opts) {
  const files = source.find(FILES)
  if (files.length === 0) { opts.note('no comments/comments.csv in this export: nothing for youtube.comments'); return }
  /** @type {Comment[]} */
  const comments = []
  const seen = new Set()
  let unusable = 0
  for (const file of files) {
    const rows = await readCsvOrSkip(source, file.path, opts)
    if (rows === undefined || rows.length === 0) continue
    const columns = columnsOf(/** @type {string[]} */ (rows[0]), rows[1])
    if (columns === null) { opts.skip(file.path, 'columns not recognised (neither the English header nor a known column order)'); continue }
    for (const r of rows.slice(1)) {
      if (r.every((x) => x.trim() === '')) continue
      const c = toComment(r, columns)
      if (c === null) unusable++
      else if (!seen.has(c.id)) { seen.add(c.id); comments.push(c) }
    }
  }
  if (unusable > 0) opts.note(`${unusable} comment(s) without an id, a time or text left out`)
  for (const [month, list] of byMonth(comments, (c) => c.commentedAt)) {
    const newestFirst = list.reverse()
    yield {
      scope: 'youtube.comments',
      collectedAt: /** @type {Comment} */ (newestFirst[0]).commentedAt,
      data: { month, comments: newestFirst },
      label: `${month}: ${newestFirst.length} comments`
    }
  }
}

/**
 * @param {string[]} header @param {string[] | undefined} firstRow
 * @returns {Columns | null}
 */
export function columnsOf (header, firstRow) {
  const names = header.map((h) => h.trim().toLowerCase())
  const at = (/** @type {string} */ n) => names.indexOf(n)
  if (at('comment id') >= 0 && at('comment create timestamp') >= 0 && at('comment text') >= 0) {
    return { id: at('comment id'), time: at('comment create timestamp'), parent: at('parent comment id'), video: at('video id'), text: at('comment text'), ...(at('post id') >= 0 ? { post: at('post id') } : {}) }
  }
  if (header.length >= 9) return ORDERS.current
  if (header.length === 7) {
    // the mid-2024 order starts with the account's channel id (UC + 22 characters)
    return /^UC[A-Za-z0-9_-]{22}$/.test(firstRow?.[0]?.trim() ?? '') ? ORDERS.mid2024 : ORDERS.old
  }
  return null
}

/** @param {string[]} r @param {Columns} c @returns {Comment | null} */
function toComment (r, c) {
  const id = text(r[c.id]?.trim())
  const commentedAt = takeoutIsoTime(r[c.time])
  const body = commentText(r[c.text] ?? '')
  if (id === undefined || commentedAt === undefined || body === undefined) return null
  const cell = (/** @type {number | undefined} */ i) => i === undefined || i < 0 ? undefined : text(r[i]?.trim())
  return {
    id,
    text: body,
    commentedAt,
    ...optional('videoId', cell(c.video)),
    ...optional('postId', cell(c.post)),
    ...optional('parentId', cell(c.parent))
  }
}

/**
 * The text of a comment cell: Takeout's JSON segments joined, or the cell itself when it is plain.
 * @param {string} cell
 * @returns {string | undefined}
 */
export function commentText (cell) {
  const s = cell.trim()
  if (s.startsWith('{')) {
    for (const candidate of [s, `[${s}]`]) {
      let parsed
      try { parsed = JSON.parse(candidate) } catch { continue }
      const segments = Array.isArray(parsed) ? parsed : isObject(parsed) && Array.isArray(parsed.takeoutSegments) ? parsed.takeoutSegments : [parsed]
      const joined = segments.map((seg) => isObject(seg) && typeof seg.text === 'string' ? seg.text : '').join('')
      return text(joined)
    }
  }
  return text(cell)
}
