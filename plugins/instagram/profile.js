// @ts-check
// Instagram profile and posts, and Meta's mojibake repair used by every Instagram file.
import { isObject, isoSeconds, text } from '../_shared/read.js'

const VIDEO = /\.(mp4|mov|m4v|webm)$/i
const PHOTO = /\.(jpe?g|png|webp|heic|gif)$/i

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


/**
 * A story from stories.json ({"ig_stories": [{uri, creation_timestamp, title, media_metadata, …}]}):
 * its media path, kind, time and caption. media_metadata (camera and EXIF data, which can hold
 * the place a photo was taken) is left out.
 * @param {unknown} raw
 * @returns {null | {createdAt: string, uri: string, kind: string, caption?: string}}
 */
export function toStory (raw) {
  if (!isObject(raw) || typeof raw.uri !== 'string' || raw.uri === '') return null
  const createdAt = isoSeconds(raw.creation_timestamp)
  if (createdAt === undefined) return null
  const caption = text(raw.title)
  return { createdAt, uri: raw.uri, kind: VIDEO.test(raw.uri) ? 'video' : PHOTO.test(raw.uri) ? 'photo' : 'other', ...(caption !== undefined ? { caption } : {}) }
}

/**
 * A profile photo from profile_photos.json ({"ig_profile_picture": [{uri, creation_timestamp,
 * title, is_active_profile?}]}), the account's past and present pictures.
 * @param {unknown} raw
 * @returns {null | {uri: string, createdAt?: string, current?: boolean}}
 */
export function toProfilePhoto (raw) {
  if (!isObject(raw) || typeof raw.uri !== 'string' || raw.uri === '') return null
  const createdAt = isoSeconds(raw.creation_timestamp)
  return {
    uri: raw.uri,
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(typeof raw.is_active_profile === 'boolean' ? { current: raw.is_active_profile } : {})
  }
}
