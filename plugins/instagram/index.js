// @ts-check
// Instagram "Download your information" (Accounts Center, JSON format) → instagram.profile and
// instagram.posts.
//
// Layout (2024 exports; older ones lack the your_instagram_activity/ level or the doubled
// personal_information/ folder, and newer ones say media/ instead of content/ — all are found):
//   personal_information/personal_information/personal_information.json
//     {"profile_user": [{"string_map_data": {"Username": {"value": ...}, "Name": ..., "Bio": ...},
//                        "media_map_data": {"Profile Photo": {"uri", "creation_timestamp"}}}]}
//   your_instagram_activity/content/posts_1.json, posts_2.json, ...
//     [{"media": [{"uri", "creation_timestamp", "title"}], "title"?, "creation_timestamp"?}]
// Field names are those of an English-language account.
//
// Meta writes every non-ASCII character as its UTF-8 bytes, each escaped as a Latin-1 code point
// ("caf\u00c3\u00a9" for "café"), so all text is repaired after parsing.
//
// Both scopes are snapshots of the account as exported: one item each, dated source.exportedAt.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

const PROFILE_FILE = /(^|\/)personal_information\/(personal_information\/)?personal_information\.json$/
const POSTS_FILE = /(^|\/)(content|media)\/posts_(\d+)\.json$/
const VIDEO = /\.(mp4|mov|m4v|webm)$/i
const PHOTO = /\.(jpe?g|png|webp|heic|gif)$/i

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    const profileFile = source.find(PROFILE_FILE)[0]
    if (profileFile === undefined) {
      opts.note('no personal_information/personal_information.json in this export: nothing for instagram.profile')
    } else {
      const profile = toProfile(fixMojibake(await source.readJson(profileFile.path)))
      if (profile === null) opts.note(`${profileFile.path} has no username: nothing for instagram.profile`)
      else yield { scope: 'instagram.profile', collectedAt: source.exportedAt, data: profile, label: `@${profile.username}` }
    }

    const postFiles = source.find(POSTS_FILE).sort((a, b) => postsFileNumber(a.path) - postsFileNumber(b.path) || (a.path < b.path ? -1 : 1))
    if (postFiles.length === 0) {
      opts.note('no content/posts_1.json in this export: nothing for instagram.posts')
      return
    }
    const posts = []
    let skipped = 0
    for (const file of postFiles) {
      const raw = fixMojibake(await source.readJson(file.path))
      const list = Array.isArray(raw) ? raw : isObject(raw) ? Object.values(raw).find(Array.isArray) : undefined
      if (list === undefined) { opts.note(`${file.path} is not a list of posts; skipped`); continue }
      for (const p of list) {
        const post = toPost(p)
        if (post === null) skipped++
        else posts.push(post)
      }
    }
    if (skipped > 0) opts.note(`${skipped} post(s) without media or time skipped`)
    // Newest first, as Instagram lists them; ties keep file order (Array.prototype.sort is stable).
    posts.sort((a, b) => a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)
    yield { scope: 'instagram.posts', collectedAt: source.exportedAt, data: { posts }, label: `${posts.length} posts` }
  }
}

/** @param {string} path */
function postsFileNumber (path) { return Number(POSTS_FILE.exec(path)?.[3] ?? 0) }

/**
 * Undo Meta's mojibake in every string (and key) of a parsed JSON value. A string is repaired
 * only when all its characters are below U+0100 and their bytes form valid UTF-8, so genuine
 * Latin-1 text ("café" written correctly) and already-correct text are left as they are.
 * @param {unknown} value
 * @returns {unknown}
 */
export function fixMojibake (value) {
  if (typeof value === 'string') return repairString(value)
  if (Array.isArray(value)) return value.map(fixMojibake)
  if (isObject(value)) {
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const [k, v] of Object.entries(value)) out[repairString(k)] = fixMojibake(v)
    return out
  }
  return value
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** @param {string} s */
function repairString (s) {
  if (!/[\u0080-\u00ff]/.test(s) || /[^\u0000-\u00ff]/.test(s)) return s
  try {
    return strictUtf8.decode(Buffer.from(s, 'latin1'))
  } catch {
    return s
  }
}

/**
 * @param {unknown} raw
 * @returns {null | {username: string, [k: string]: unknown}}
 */
export function toProfile (raw) {
  const user = isObject(raw) && Array.isArray(raw.profile_user) ? raw.profile_user[0] : undefined
  if (!isObject(user)) return null
  const fields = isObject(user.string_map_data) ? user.string_map_data : {}
  /** @param {string} key */
  const value = (key) => {
    const f = fields[key]
    return isObject(f) && typeof f.value === 'string' && f.value.trim() !== '' ? f.value : undefined
  }
  const username = value('Username')
  if (username === undefined) return null
  const name = value('Name')
  const bio = value('Bio')
  const website = value('Website')
  const gender = value('Gender')
  const dateOfBirth = value('Date of birth')
  const isPrivate = value('Private Account')
  const media = isObject(user.media_map_data) ? user.media_map_data : {}
  const photo = media['Profile Photo']
  const photoUri = isObject(photo) && typeof photo.uri === 'string' && photo.uri !== '' ? photo.uri : undefined
  const photoAt = isObject(photo) ? isoSeconds(photo.creation_timestamp) : undefined
  return {
    username,
    ...(name !== undefined ? { name } : {}),
    ...(bio !== undefined ? { bio } : {}),
    ...(website !== undefined ? { website } : {}),
    ...(gender !== undefined ? { gender } : {}),
    ...(dateOfBirth !== undefined ? { dateOfBirth } : {}),
    ...(isPrivate !== undefined ? { private: isPrivate.toLowerCase() === 'true' } : {}),
    ...(photoUri !== undefined ? { profilePhoto: { uri: photoUri, ...(photoAt !== undefined ? { createdAt: photoAt } : {}) } } : {})
  }
}

/**
 * A single-photo post keeps its caption on the media; a carousel has it on the post. Either way
 * the caption ends up on the post.
 * @param {unknown} raw
 * @returns {null | {createdAt: string, caption?: string, media: {uri: string, kind: string, createdAt?: string, caption?: string}[]}}
 */
export function toPost (raw) {
  if (!isObject(raw) || !Array.isArray(raw.media)) return null
  const media = []
  for (const m of raw.media) {
    if (!isObject(m) || typeof m.uri !== 'string' || m.uri === '') continue
    const createdAt = isoSeconds(m.creation_timestamp)
    const caption = text(m.title)
    media.push({
      uri: m.uri,
      kind: VIDEO.test(m.uri) ? 'video' : PHOTO.test(m.uri) ? 'photo' : 'other',
      ...(createdAt !== undefined ? { createdAt } : {}),
      ...(caption !== undefined ? { caption } : {})
    })
  }
  if (media.length === 0) return null
  const createdAt = isoSeconds(raw.creation_timestamp) ?? media.map((m) => m.createdAt).filter((t) => t !== undefined).sort()[0]
  if (createdAt === undefined) return null
  let caption = text(raw.title)
  if (caption === undefined && media.length === 1 && media[0].caption !== undefined) {
    caption = media[0].caption
    delete media[0].caption
  }
  return { createdAt, ...(caption !== undefined ? { caption } : {}), media }
}

/** @param {unknown} v @returns {string | undefined} */
function text (v) { return typeof v === 'string' && v.trim() !== '' ? v : undefined }

/**
 * @param {unknown} t Unix seconds
 * @returns {string | undefined}
 */
function isoSeconds (t) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return undefined
  const d = new Date(t * 1000)
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace('.000Z', 'Z')
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isObject (v) { return v !== null && typeof v === 'object' && !Array.isArray(v) }
