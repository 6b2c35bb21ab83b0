// @ts-check
// ChatGPT data export (Settings → Data controls → Export data) → chatgpt.conversations and
// chatgpt.conversations.shared.
//
// The export's conversations.json is an array of conversations. Each holds its messages as a
// tree (`mapping`: node id → {message, parent, children}) because editing a prompt or
// regenerating an answer forks the conversation; `current_node` is the leaf the user last saw.
// The whole tree is kept (tree.js): every message with the one it follows (`parent`), and the
// message that ends the current branch (`currentMessage`), which readers show by default. The
// file grows to hundreds of megabytes for heavy users, so it is parsed as it streams: one
// conversation in memory at a time.
//
// Kept: the text of user, assistant and tool messages, cleaned of the citation markers of web
// search answers, whose sources become structured fields (citations.js); a code block's
// language; voice-mode transcripts (the audio_transcription parts); images, audio and uploaded
// files as references (asset pointers and file ids — the files themselves are in the export).
// Left out: system prompts, custom instructions, memories, the model's reasoning (thoughts,
// reasoning_recap) and error banners.
//
// One item per conversation, dated by the conversation's update_time: a later export yields the
// unchanged conversations again with the same time and content (the daemon answers duplicate)
// and only conversations that changed become new versions.
//
// shared_conversations.json lists the conversations the user shared by link:
//   [{"id": "<share id>", "conversation_id", "title", "is_anonymous"}]
// → one chatgpt.conversations.shared snapshot, dated source.exportedAt.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { isObject, optional, readJsonOrSkip, skipKnownFiles, streamListOrSkip } from '../_shared/read.js'
import { cleanCitations, httpUrl } from './citations.js'
import { keptTree } from './tree.js'

const SCOPE = 'chatgpt.conversations'
const SHARED_SCOPE = 'chatgpt.conversations.shared'
// conversations.json, and the numbered parts some exports split it into.
const CONVERSATION_FILES = /(^|\/)conversations(-\d+)?\.json$/
const SHARED_FILE = /(^|\/)shared_conversations\.json$/
/** @type {import('../_shared/read.js').KnownFile[]} */
const KNOWN_UNUSED = [
  { pattern: /(^|\/)chat\.html$/, reason: 'the same conversations as conversations.json, as a web page' },
  { pattern: /(^|\/)user\.json$/, reason: 'account details (e-mail, phone, plan): left out' },
  { pattern: /(^|\/)message_feedback\.json$/, reason: 'thumbs-up/down feedback is not imported' },
  { pattern: /(^|\/)model_comparisons\.json$/, reason: 'A/B answer comparisons are not imported' }
]
const ROLES = new Set(['user', 'assistant', 'tool'])
// Content that is not part of the visible exchange: custom instructions, saved memories,
// the model's hidden reasoning, error banners.
const HIDDEN_CONTENT = new Set(['user_editable_context', 'model_editable_context', 'thoughts', 'reasoning_recap', 'system_error'])

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readConversations(source, opts)
    yield * readShared(source, opts)
    skipKnownFiles(source, opts, KNOWN_UNUSED)
  }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readConversations (source, opts) {
  const files = source.find(CONVERSATION_FILES)
  if (files.length === 0) {
    opts.note(`no conversations.json in this export: nothing for ${SCOPE}`)
    return
  }
  const seen = new Set()
  let withoutId = 0
  for (const file of files) {
    for await (const raw of streamListOrSkip(source, file.path, opts, 'conversations')) {
      const data = toConversation(raw)
      if (data === null) { withoutId++; continue }
      const key = `${data.id}@${data.updatedAt ?? ''}`
      if (seen.has(key)) continue
      seen.add(key)
      yield {
        scope: SCOPE,
        collectedAt: data.updatedAt ?? data.createdAt ?? source.exportedAt,
        data,
        label: data.title !== '' ? data.title : data.id
      }
    }
  }
  if (withoutId > 0) opts.note(`${withoutId} conversation(s) without an id skipped`)
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readShared (source, opts) {
  const file = source.find(SHARED_FILE)[0]
  if (file === undefined) { opts.note(`no shared_conversations.json in this export: nothing for ${SHARED_SCOPE}`); return }
  const raw = await readJsonOrSkip(source, file.path, opts)
  if (raw === undefined) return
  if (!Array.isArray(raw)) { opts.skip(file.path, 'not a list of shared conversations'); return }
  const shares = []
  for (const s of raw) {
    if (!isObject(s)) continue
    const id = nonEmptyString(s.id)
    const conversationId = nonEmptyString(s.conversation_id)
    if (id === undefined || conversationId === undefined) continue
    shares.push({
      id,
      conversationId,
      ...optional('title', typeof s.title === 'string' ? s.title : undefined),
      ...optional('anonymous', typeof s.is_anonymous === 'boolean' ? s.is_anonymous : undefined)
    })
  }
  yield { scope: SHARED_SCOPE, collectedAt: source.exportedAt, data: { shares }, label: `${shares.length} shared conversations` }
}

/**
 * @param {unknown} raw
 * @returns {null | {id: string, title: string, createdAt?: string, updatedAt?: string, model?: string, archived?: boolean, currentMessage?: string, messages: object[]}}
 */
export function toConversation (raw) {
  if (!isObject(raw)) return null
  const id = nonEmptyString(raw.conversation_id) ?? nonEmptyString(raw.id)
  if (id === undefined) return null
  const createdAt = isoTime(raw.create_time)
  const updatedAt = isoTime(raw.update_time) ?? createdAt
  const model = nonEmptyString(raw.default_model_slug)
  const { messages, currentMessage } = keptTree(isObject(raw.mapping) ? raw.mapping : {}, raw.current_node, toMessage)
  return {
    id,
    title: typeof raw.title === 'string' ? raw.title : '',
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(typeof raw.is_archived === 'boolean' ? { archived: raw.is_archived } : {}),
    ...(currentMessage !== undefined ? { currentMessage } : {}),
    messages
  }
}

/**
 * @param {Record<string, unknown>} node
 * @param {string} nodeId
 * @returns {null | {id: string} & Record<string, unknown>}
 */
function toMessage (node, nodeId) {
  const m = node.message
  if (!isObject(m)) return null
  const author = isObject(m.author) ? m.author : {}
  const role = author.role
  if (typeof role !== 'string' || !ROLES.has(role)) return null
  const metadata = isObject(m.metadata) ? m.metadata : {}
  if (metadata.is_visually_hidden_from_conversation === true || metadata.is_user_system_message === true) return null
  const content = isObject(m.content) ? m.content : {}
  const contentType = typeof content.content_type === 'string' ? content.content_type : 'text'
  if (HIDDEN_CONTENT.has(contentType)) return null

  const texts = []
  const attachments = []
  if (Array.isArray(content.parts)) {
    for (const part of content.parts) {
      if (typeof part === 'string') texts.push(part)
      else if (isObject(part)) {
        if (typeof part.text === 'string') texts.push(part.text) // e.g. audio_transcription in voice chats
        else attachments.push(...assetReferences(part))
      }
    }
  } else if (typeof content.text === 'string') texts.push(content.text) // code, execution_output, tether_quote
  else if (typeof content.result === 'string') texts.push(content.result) // tether_browsing_display

  // Files the user uploaded with the message (PDFs, spreadsheets, images): their ids.
  if (Array.isArray(metadata.attachments)) {
    for (const a of metadata.attachments) {
      const id = isObject(a) ? nonEmptyString(a.id) : undefined
      if (id !== undefined && !attachments.some((x) => x.ref === id || x.ref.endsWith(`/${id}`))) attachments.push({ type: 'file', ref: id })
    }
  }
  const quoted = contentType === 'tether_quote' ? quotedPage(content) : []
  const { text, sources, citations } = cleanCitations(texts.join('\n'), metadata, quoted)
  if (text.trim() === '' && attachments.length === 0) return null
  const createdAt = isoTime(m.create_time)
  const model = role === 'assistant' ? nonEmptyString(metadata.model_slug) : undefined
  const name = role === 'tool' ? nonEmptyString(author.name) : undefined
  const language = contentType === 'code' && typeof content.language === 'string' && !['', 'unknown'].includes(content.language) ? content.language : undefined
  return {
    id: nonEmptyString(m.id) ?? nodeId,
    role,
    text,
    contentType,
    ...optional('language', language),
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(sources.length > 0 ? { sources } : {}),
    ...(citations.length > 0 ? { citations } : {})
  }
}

/**
 * The page a tether_quote message quotes ({url, domain, title, text}).
 * @param {Record<string, unknown>} content
 * @returns {import('./citations.js').Source[]}
 */
function quotedPage (content) {
  const url = httpUrl(content.url)
  if (url === undefined) return []
  return [{ url, ...optional('title', nonEmptyString(content.title)), ...optional('attribution', nonEmptyString(content.domain)) }]
}

/**
 * The asset pointers in one content part: an image or audio pointer, or a voice-mode
 * real_time_user_audio_video_asset_pointer that nests its audio and video pointers.
 * @param {Record<string, unknown>} part
 * @returns {{type: string, ref: string, width?: number, height?: number}[]}
 */
function assetReferences (part) {
  const type = typeof part.content_type === 'string' ? part.content_type.replace(/_asset_pointer$/, '') : 'file'
  if (typeof part.asset_pointer === 'string' && part.asset_pointer !== '') {
    return [{
      type,
      ref: part.asset_pointer,
      ...(positiveInt(part.width) ? { width: part.width } : {}),
      ...(positiveInt(part.height) ? { height: part.height } : {})
    }]
  }
  const nested = []
  for (const [key, kind] of [['audio_asset_pointer', 'audio'], ['video_container_asset_pointer', 'video']]) {
    const p = part[key]
    if (isObject(p) && typeof p.asset_pointer === 'string' && p.asset_pointer !== '') nested.push({ type: kind, ref: p.asset_pointer })
  }
  return nested
}

/**
 * ChatGPT times are Unix seconds with a fraction (1704067200.123456); kept to the millisecond.
 * @param {unknown} t
 * @returns {string | undefined}
 */
function isoTime (t) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) return undefined
  const d = new Date(Math.round(t * 1000))
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString()
}

/** @param {unknown} v @returns {string | undefined} */
function nonEmptyString (v) { return typeof v === 'string' && v !== '' ? v : undefined }

/** @param {unknown} v @returns {v is number} */
function positiveInt (v) { return Number.isInteger(v) && /** @type {number} */ (v) > 0 }
