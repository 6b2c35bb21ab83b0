// @ts-check
// X (Twitter) direct messages → one item per conversation and calendar month. Pure: no I/O.
//   direct-messages.js (one-to-one; direct-message.js in 2019) and direct-messages-group.js:
//   {"dmConversation": {"conversationId": "12-34" | "<group id>", "messages": [          newest first
//     {"messageCreate": {"id", "senderId", "recipientId"? (not in groups), "text", "createdAt": ISO,
//        "urls": [{"url", "expanded", "display"}], "mediaUrls": [], "reactions": [{"senderId",
//        "reactionKey", "createdAt"}], "editHistory"?}},
//     {"joinConversation": {"initiatingUserId", "participantsSnapshot", "createdAt"}},
//     {"participantsJoin": {"initiatingUserId", "userIds", "createdAt"}},
//     {"participantsLeave": {"userIds", "createdAt"}},
//     {"conversationNameUpdate": {"initiatingUserId", "name", "createdAt"}}]}}
// People are their X account ids, as in the export (it holds no names or handles for them).
import { byMonth, isObject, optional, text } from '../_shared/read.js'
import { xTime } from './tweets.js'

const DIGITS = /^\d{1,20}$/

/** @param {unknown} v @returns {string | undefined} */
function accountId (v) { return typeof v === 'string' && DIGITS.test(v) ? v : undefined }

/** @param {unknown} v @returns {string[]} */
function accountIds (v) { return Array.isArray(v) ? v.flatMap((x) => accountId(x) ?? []) : [] }

/** @param {unknown} v @returns {string | undefined} */
function httpUrl (v) { return typeof v === 'string' && /^https?:\/\/\S+$/.test(v) ? v : undefined }

/**
 * @typedef {{kind: 'message', at: string, id: string, senderId: string, recipientId?: string, text: string,
 *   urls?: string[], media?: string[], reactions?: {senderId: string, reaction: string, at?: string}[]}} Message
 * @typedef {{kind: 'joined' | 'added' | 'left' | 'renamed', at: string, by?: string, userIds?: string[], name?: string}} ConversationEvent
 */

/**
 * A message or a membership event of a conversation, or null when it has no time or sender.
 * @param {unknown} raw
 * @returns {Message | ConversationEvent | null}
 */
export function toMessageOrEvent (raw) {
  if (!isObject(raw)) return null
  if (isObject(raw.messageCreate)) {
    const m = raw.messageCreate
    const at = xTime(m.createdAt)
    const id = accountId(m.id)
    const senderId = accountId(m.senderId)
    if (at === undefined || id === undefined || senderId === undefined) return null
    const urls = Array.isArray(m.urls) ? m.urls.flatMap((u) => isObject(u) ? httpUrl(u.expanded) ?? httpUrl(u.url) ?? [] : []) : []
    const media = Array.isArray(m.mediaUrls) ? m.mediaUrls.flatMap((u) => httpUrl(u) ?? []) : []
    const reactions = Array.isArray(m.reactions)
      ? m.reactions.flatMap((r) => {
        const who = isObject(r) ? accountId(r.senderId) : undefined
        const reaction = isObject(r) ? text(r.reactionKey) ?? text(r.emoji) : undefined
        return who === undefined || reaction === undefined ? [] : [{ senderId: who, reaction, ...optional('at', xTime(/** @type {Record<string, unknown>} */ (r).createdAt)) }]
      })
      : []
    return {
      kind: 'message',
      at,
      id,
      senderId,
      ...optional('recipientId', accountId(m.recipientId)),
      text: typeof m.text === 'string' ? m.text : '',
      ...(urls.length > 0 ? { urls } : {}),
      ...(media.length > 0 ? { media } : {}),
      ...(reactions.length > 0 ? { reactions } : {})
    }
  }
  for (const [key, kind] of /** @type {const} */ ([['joinConversation', 'joined'], ['participantsJoin', 'added'], ['participantsLeave', 'left'], ['conversationNameUpdate', 'renamed']])) {
    const e = raw[key]
    if (!isObject(e)) continue
    const at = xTime(e.createdAt)
    if (at === undefined) return null
    const userIds = accountIds(e.userIds)
    return {
      kind,
      at,
      ...optional('by', accountId(e.initiatingUserId)),
      ...(userIds.length > 0 ? { userIds } : {}),
      ...optional('name', kind === 'renamed' ? text(e.name) : undefined)
    }
  }
  return null
}

/**
 * One dmConversation entry → its calendar months (UTC), each {conversationId, group, month,
 * messages, events} with what happened in that month, oldest first; [] without an id.
 * Also counts what could not be read.
 * @param {unknown} raw @param {boolean} group
 * @returns {{months: Array<{conversationId: string, group: boolean, month: string, messages: Omit<Message, 'kind'>[], events: ConversationEvent[], last: string}>, unreadable: number}}
 */
export function toConversationMonths (raw, group) {
  const c = isObject(raw) && isObject(raw.dmConversation) ? raw.dmConversation : undefined
  const conversationId = text(c?.conversationId)
  if (c === undefined || conversationId === undefined || !Array.isArray(c.messages)) return { months: [], unreadable: 1 }
  const entries = []
  let unreadable = 0
  for (const m of c.messages) {
    const e = toMessageOrEvent(m)
    if (e === null) unreadable++
    else entries.push(e)
  }
  const months = byMonth(entries, (e) => e.at).map(([month, list]) => ({
    conversationId,
    group,
    month,
    messages: list.filter((e) => e.kind === 'message').map(({ kind: _k, ...m }) => m),
    events: list.filter((e) => e.kind !== 'message'),
    last: /** @type {string} */ (list.at(-1)?.at)
  }))
  return { months, unreadable }
}
