// @ts-check
// Instagram's list files — followers, following, likes, saved items, comments — in each shape
// Meta has shipped:
//   string_list_data  [{"title": "", "string_list_data": [{"href", "value": "<username>", "timestamp"}]}]
//                     (2025–2026 following.json: the username in "title", no "value")
//   string_map_data   [{"title": "<owner>", "string_map_data": {"Saved on": {"href", "timestamp"}}}]
//                     comments: {"Comment": {"value"}, "Media Owner": {"value"}, "Time": {"timestamp"}}
//   label_values      [{"timestamp", "label_values": [{"label": "URL", "value", "href"},
//                       {"title": "Owner", "dict": [{"dict": [{"label": "Username", "value"}]}]}]}]
// A file holds the list itself, or an object with it under one key (relationships_following,
// likes_media_likes, saved_saved_media, comments_media_comments, ...).
import { isObject, isoSeconds, optional, text } from '../_shared/read.js'

/**
 * The list inside a parsed file, or undefined when there is none.
 * @param {unknown} raw
 * @returns {unknown[] | undefined}
 */
export function listIn (raw) {
  if (Array.isArray(raw)) return raw
  if (!isObject(raw)) return undefined
  const lists = Object.values(raw).filter(Array.isArray)
  return lists.length === 1 ? lists[0] : lists.length > 1 ? lists.flat() : undefined
}

/**
 * Every labelled field of one entry, whatever its shape: name (lower case) → {value, href, timestamp}.
 * @param {Record<string, unknown>} entry
 * @returns {Map<string, {value?: string, href?: string, timestamp?: number}>}
 */
function fieldsOf (entry) {
  /** @type {Map<string, {value?: string, href?: string, timestamp?: number}>} */
  const fields = new Map()
  /** @param {string} name @param {unknown} f */
  const add = (name, f) => {
    if (!isObject(f) || fields.has(name.toLowerCase())) return
    fields.set(name.toLowerCase(), {
      ...optional('value', text(f.value)),
      ...optional('href', text(f.href)),
      ...optional('timestamp', typeof f.timestamp === 'number' && f.timestamp > 0 ? f.timestamp : undefined)
    })
  }
  if (isObject(entry.string_map_data)) for (const [k, v] of Object.entries(entry.string_map_data)) add(k, v)
  /** @param {unknown} list */
  const walkLabels = (list) => {
    if (!Array.isArray(list)) return
    for (const lv of list) {
      if (!isObject(lv)) continue
      if (typeof lv.label === 'string') add(lv.label, lv)
      walkLabels(lv.dict)
    }
  }
  walkLabels(entry.label_values)
  return fields
}

/** @param {Record<string, unknown>} entry */
function firstListed (entry) {
  const list = Array.isArray(entry.string_list_data) ? entry.string_list_data : []
  const first = list.find(isObject)
  return isObject(first) ? first : {}
}

/** @param {string | undefined} href */
function usernameFromUrl (href) {
  if (href === undefined) return undefined
  const m = /instagram\.com\/(?:_u\/)?([A-Za-z0-9._]+)\/?$/.exec(href)
  return m?.[1]
}

/**
 * A follower or followed account: {username, url?, since?}, or null without a username.
 * @param {unknown} entry
 */
export function toAccount (entry) {
  if (!isObject(entry)) return null
  const listed = firstListed(entry)
  const fields = fieldsOf(entry)
  const href = text(listed.href) ?? fields.get('url')?.href ?? fields.get('url')?.value
  const username = text(listed.value) ?? text(entry.title) ?? fields.get('username')?.value ?? usernameFromUrl(href)
  if (username === undefined) return null
  const since = isoSeconds(listed.timestamp) ?? isoSeconds(entry.timestamp)
  return { username, ...optional('url', href), ...optional('since', since) }
}

/**
 * A liked post or comment: {kind, owner?, url?, likedAt?, reaction?}, or null when it names nothing.
 * @param {unknown} entry @param {'post' | 'comment'} kind
 */
export function toLike (entry, kind) {
  if (!isObject(entry)) return null
  const listed = firstListed(entry)
  const fields = fieldsOf(entry)
  const url = text(listed.href) ?? fields.get('url')?.href ?? fields.get('url')?.value
  const owner = text(entry.title) ?? fields.get('username')?.value ?? fields.get('owner')?.value
  const likedAt = isoSeconds(listed.timestamp) ?? isoSeconds(entry.timestamp)
  if (url === undefined && owner === undefined) return null
  return { kind, ...optional('owner', owner), ...optional('url', url), ...optional('likedAt', likedAt), ...optional('reaction', text(listed.value)) }
}

/**
 * A saved post: {owner?, url?, savedAt?}, or null when it names nothing.
 * @param {unknown} entry
 */
export function toSaved (entry) {
  if (!isObject(entry)) return null
  const fields = fieldsOf(entry)
  const saved = fields.get('saved on')
  const url = saved?.href ?? fields.get('url')?.href ?? fields.get('url')?.value
  const owner = text(entry.title) ?? fields.get('username')?.value ?? fields.get('owner')?.value
  const savedAt = isoSeconds(saved?.timestamp) ?? isoSeconds(entry.timestamp)
  if (url === undefined && owner === undefined) return null
  return { ...optional('owner', owner), ...optional('url', url), ...optional('savedAt', savedAt) }
}

/**
 * A comment the account wrote: {text, on, mediaOwner?, createdAt?}, or null without text.
 * @param {unknown} entry @param {'post' | 'reel'} on
 */
export function toComment (entry, on) {
  if (!isObject(entry)) return null
  const fields = fieldsOf(entry)
  const body = fields.get('comment')?.value
  if (body === undefined) return null
  const createdAt = isoSeconds(fields.get('time')?.timestamp) ?? isoSeconds(entry.timestamp)
  return { text: body, on, ...optional('mediaOwner', fields.get('media owner')?.value), ...optional('createdAt', createdAt) }
}
