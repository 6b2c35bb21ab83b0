// @ts-check
// Instagram direct messages: messages/inbox/<thread>/message_1.json, message_2.json, ... (and
// messages/message_requests/), one conversation split over numbered files, newest first:
//   {"participants": [{"name"}], "title", "messages": [{"sender_name", "timestamp_ms", "content"?,
//    "photos"?/"videos"?/"audio_files"?/"gifs"?/"files"?: [{"uri"}], "share"?: {"link", "share_text",
//    "original_content_owner"}, "reactions"?: [{"reaction", "actor"}], "is_unsent"?}]}
import { isObject, optional, text } from '../_shared/read.js'

export const MESSAGE_FILE = /(^|\/)messages\/(inbox|message_requests)\/([^/]+)\/message_(\d+)\.json$/

const ATTACHMENT_KINDS = /** @type {const} */ ([['photos', 'photo'], ['videos', 'video'], ['audio_files', 'audio'], ['gifs', 'gif'], ['files', 'file']])

/**
 * One thread's parsed files (any order) → the conversation, messages oldest first; null when no
 * message has a sender and a time.
 * @param {string} id thread folder name
 * @param {'inbox' | 'message_requests'} folder
 * @param {unknown[]} files
 */
export function toConversation (id, folder, files) {
  const participants = new Set()
  let title
  const messages = []
  for (const raw of files) {
    if (!isObject(raw)) continue
    title ??= text(raw.title)
    if (Array.isArray(raw.participants)) for (const p of raw.participants) if (isObject(p) && text(p.name) !== undefined) participants.add(p.name)
    if (Array.isArray(raw.messages)) for (const m of raw.messages) { const msg = toMessage(m); if (msg !== null) messages.push(msg) }
  }
  if (messages.length === 0) return null
  messages.sort((a, b) => a.sentAt < b.sentAt ? -1 : a.sentAt > b.sentAt ? 1 : 0)
  return { id, folder, title: title ?? id, participants: [...participants], messages }
}

/** @param {unknown} m */
function toMessage (m) {
  if (!isObject(m)) return null
  const sender = text(m.sender_name)
  const ms = m.timestamp_ms
  if (sender === undefined || typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return null
  const attachments = []
  for (const [key, kind] of ATTACHMENT_KINDS) {
    const list = m[key]
    if (Array.isArray(list)) for (const a of list) if (isObject(a) && text(a.uri) !== undefined) attachments.push({ kind, uri: a.uri })
  }
  const share = isObject(m.share)
    ? { ...optional('url', text(m.share.link)), ...optional('text', text(m.share.share_text)), ...optional('owner', text(m.share.original_content_owner)) }
    : undefined
  const reactions = Array.isArray(m.reactions)
    ? m.reactions.filter((r) => isObject(r) && text(r.reaction) !== undefined && text(r.actor) !== undefined).map((r) => ({ reaction: r.reaction, actor: r.actor }))
    : []
  return {
    sender,
    sentAt: new Date(Math.floor(ms)).toISOString(),
    ...optional('text', text(m.content)),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(share !== undefined && Object.keys(share).length > 0 ? { share } : {}),
    ...(reactions.length > 0 ? { reactions } : {}),
    ...(m.is_unsent === true ? { unsent: true } : {})
  }
}
