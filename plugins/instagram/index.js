// @ts-check
// Instagram "Download your information" (Accounts Center, JSON format) → profile, posts,
// followers, following, likes, saved items, comments and direct messages.
//
// Layouts read (files are found by name under any top folder, so all of these work):
//   2023       personal_information/personal_information.json, content/posts_1.json,
//              followers_and_following/…, likes/…, saved/…, comments/…, messages/inbox/…
//   2024       personal_information/personal_information/personal_information.json,
//              connections/followers_and_following/…, your_instagram_activity/{content,likes,
//              saved,comments,messages}/…
//   2025–2026  your_instagram_activity/media/posts_1.json (media/ instead of content/), and
//              following.json with the username in "title" and no "value"
// Stories (stories.json) and profile-photo history (profile_photos.json) sit beside the posts.
// Exports are often partial (the user picks categories): a missing category is a note, an
// empty one (no-data.txt) is listed by the import, a broken file is skipped with its reason.
// Field names are those of an English-language account.
//
// Meta writes every non-ASCII character as its UTF-8 bytes, each escaped as a Latin-1 code point
// ("caf\u00c3\u00a9" for "café"), so all text is repaired after parsing.
//
// Profile, posts, followers, following, likes, saved items and comments are snapshots of the
// account as exported: one item each, dated source.exportedAt. A conversation is one item per
// thread, dated by its last message, so a later export only adds the threads that grew.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { numberedFiles, readJsonOrSkip, skipKnownFiles } from '../_shared/read.js'
import { KNOWN_UNUSED } from './known.js'
import { MESSAGE_FILE, toConversation } from './messages.js'
import { fixMojibake, toPost, toProfile, toProfilePhoto, toStory } from './profile.js'
import { listIn, toAccount, toComment, toLike, toSaved } from './relations.js'

export { fixMojibake, toPost, toProfile } from './profile.js'

const PROFILE_FILE = /(^|\/)personal_information\/(personal_information\/)?personal_information\.json$/
const POSTS_FILE = /(^|\/)(content|media)\/posts_\d+\.json$/

/**
 * The snapshot scopes made of list files: which files, how each entry converts, the data key.
 * @type {Array<{scope: string, key: string, noun: string, sources: Array<{pattern: RegExp, convert: (e: unknown) => object | null}>}>}
 */
const LISTS = [
  { scope: 'instagram.followers', key: 'accounts', noun: 'followers', sources: [{ pattern: /(^|\/)followers_and_following\/followers(_\d+)?\.json$/, convert: toAccount }] },
  { scope: 'instagram.following', key: 'accounts', noun: 'followed accounts', sources: [{ pattern: /(^|\/)followers_and_following\/following(_\d+)?\.json$/, convert: toAccount }] },
  {
    scope: 'instagram.likes',
    key: 'likes',
    noun: 'likes',
    sources: [
      { pattern: /(^|\/)likes\/liked_posts(_\d+)?\.json$/, convert: (e) => toLike(e, 'post') },
      { pattern: /(^|\/)likes\/liked_comments(_\d+)?\.json$/, convert: (e) => toLike(e, 'comment') }
    ]
  },
  { scope: 'instagram.saved', key: 'saved', noun: 'saved posts', sources: [{ pattern: /(^|\/)saved\/saved_posts(_\d+)?\.json$/, convert: toSaved }] },
  {
    scope: 'instagram.comments',
    key: 'comments',
    noun: 'comments',
    sources: [
      { pattern: /(^|\/)comments\/post_comments(_\d+)?\.json$/, convert: (e) => toComment(e, 'post') },
      { pattern: /(^|\/)comments\/reels_comments(_\d+)?\.json$/, convert: (e) => toComment(e, 'reel') }
    ]
  },
  { scope: 'instagram.stories', key: 'stories', noun: 'stories', sources: [{ pattern: /(^|\/)(content|media)\/stories(_\d+)?\.json$/, convert: toStory }] },
  { scope: 'instagram.profilePhotos', key: 'photos', noun: 'profile photos', sources: [{ pattern: /(^|\/)(content|media)\/profile_photos\.json$/, convert: toProfilePhoto }] }
]

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readProfile(source, opts)
    yield * readPosts(source, opts)
    for (const list of LISTS) yield * readList(source, opts, list)
    yield * readConversations(source, opts)
    skipKnownFiles(source, opts, KNOWN_UNUSED)
  }
}

/** @param {ExportSource} source @param {ReadOptions} opts @param {string} path */
async function readMeta (source, opts, path) {
  const raw = await readJsonOrSkip(source, path, opts)
  return raw === undefined ? undefined : fixMojibake(raw)
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readProfile (source, opts) {
  const file = source.find(PROFILE_FILE)[0]
  if (file === undefined) { opts.note('no personal_information.json in this export: nothing for instagram.profile'); return }
  const raw = await readMeta(source, opts, file.path)
  if (raw === undefined) return
  const profile = toProfile(raw)
  if (profile === null) opts.skip(file.path, 'no username in it: nothing for instagram.profile')
  else yield { scope: 'instagram.profile', collectedAt: source.exportedAt, data: profile, label: `@${profile.username}` }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readPosts (source, opts) {
  const files = numberedFiles(source, POSTS_FILE)
  if (files.length === 0) { opts.note('no posts_1.json (content/ or media/) in this export: nothing for instagram.posts'); return }
  const posts = []
  let skipped = 0
  for (const file of files) {
    const raw = await readMeta(source, opts, file.path)
    if (raw === undefined) continue
    const list = listIn(raw)
    if (list === undefined) { opts.skip(file.path, 'not a list of posts'); continue }
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

/**
 * @param {ExportSource} source @param {ReadOptions} opts @param {typeof LISTS[number]} list
 * @returns {AsyncGenerator<ConnectorItem>}
 */
async function * readList (source, opts, list) {
  const records = []
  let found = 0
  let read = 0
  let unusable = 0
  for (const { pattern, convert } of list.sources) {
    for (const file of numberedFiles(source, pattern)) {
      found++
      const raw = await readMeta(source, opts, file.path)
      if (raw === undefined) continue
      const entries = listIn(raw)
      if (entries === undefined) { opts.skip(file.path, `not a list of ${list.noun}`); continue }
      read++
      for (const e of entries) {
        const r = convert(e)
        if (r === null) unusable++
        else records.push(r)
      }
    }
  }
  if (found === 0) { opts.note(`no ${list.noun} in this export: nothing for ${list.scope}`); return }
  // A snapshot made from none of its files would say "none" where the export said something.
  if (read === 0) return
  if (read < found) opts.note(`${list.scope} holds what ${read} of its ${found} files say; the others were skipped`)
  if (unusable > 0) opts.note(`${unusable} of the ${list.noun} named nothing usable and were left out`)
  yield { scope: list.scope, collectedAt: source.exportedAt, data: { [list.key]: records }, label: `${records.length} ${list.noun}` }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readConversations (source, opts) {
  /** @type {Map<string, {id: string, folder: 'inbox' | 'message_requests', paths: string[]}>} */
  const threads = new Map()
  for (const file of numberedFiles(source, MESSAGE_FILE)) {
    const m = /** @type {RegExpExecArray} */ (MESSAGE_FILE.exec(file.path))
    const dir = file.path.slice(0, file.path.lastIndexOf('/'))
    let t = threads.get(dir)
    if (t === undefined) { t = { id: /** @type {string} */ (m[3]), folder: m[2] === 'inbox' ? 'inbox' : 'message_requests', paths: [] }; threads.set(dir, t) }
    t.paths.push(file.path)
  }
  if (threads.size === 0) { opts.note('no messages/inbox/ in this export: nothing for instagram.conversations'); return }
  for (const [dir, t] of [...threads].sort((a, b) => a[0] < b[0] ? -1 : 1)) {
    const files = []
    for (const path of t.paths) { const raw = await readMeta(source, opts, path); if (raw !== undefined) files.push(raw) }
    if (files.length === 0) continue
    const conversation = toConversation(t.id, t.folder, files)
    if (conversation === null) { opts.note(`${dir} has no message with a sender and a time; left out`); continue }
    yield {
      scope: 'instagram.conversations',
      collectedAt: /** @type {{sentAt: string}} */ (conversation.messages.at(-1)).sentAt,
      data: conversation,
      label: `${conversation.title}: ${conversation.messages.length} messages`
    }
  }
}
