// @ts-check
// ChatGPT data export (Settings → Data controls → Export data) → chatgpt.conversations.
//
// The export's conversations.json is an array of conversations. Each holds its messages as a
// tree (`mapping`: node id → {message, parent, children}) because editing a prompt or
// regenerating an answer forks the conversation; `current_node` is the leaf the user last saw.
// The active branch is that leaf's path back to the root — what the ChatGPT UI shows.
//
// One item per conversation, dated by the conversation's update_time: a later export yields the
// unchanged conversations again with the same time and content (the daemon answers duplicate)
// and only conversations that changed become new versions.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

const SCOPE = 'chatgpt.conversations'
// conversations.json, and the numbered parts some exports split it into.
const CONVERSATION_FILES = /(^|\/)conversations(-\d+)?\.json$/
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
    const files = source.find(CONVERSATION_FILES)
    if (files.length === 0) {
      opts.note(`no conversations.json in this export: nothing for ${SCOPE}`)
      return
    }
    const seen = new Set()
    let withoutId = 0
    for (const file of files) {
      const list = await source.readJson(file.path)
      if (!Array.isArray(list)) {
        opts.note(`${file.path} is not a list of conversations; skipped`)
        continue
      }
      for (const raw of list) {
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
}

/**
 * @param {unknown} raw
 * @returns {null | {id: string, title: string, createdAt?: string, updatedAt?: string, model?: string, archived?: boolean, messages: object[]}}
 */
export function toConversation (raw) {
  if (!isObject(raw)) return null
  const id = nonEmptyString(raw.conversation_id) ?? nonEmptyString(raw.id)
  if (id === undefined) return null
  const createdAt = isoTime(raw.create_time)
  const updatedAt = isoTime(raw.update_time) ?? createdAt
  const model = nonEmptyString(raw.default_model_slug)
  const mapping = isObject(raw.mapping) ? raw.mapping : {}
  const messages = []
  for (const node of activeBranch(mapping, raw.current_node)) {
    const message = toMessage(node)
    if (message !== null) messages.push(message)
  }
  return {
    id,
    title: typeof raw.title === 'string' ? raw.title : '',
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(updatedAt !== undefined ? { updatedAt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(typeof raw.is_archived === 'boolean' ? { archived: raw.is_archived } : {}),
    messages
  }
}

/**
 * The nodes from the root to `currentNode`. Without a usable current_node, the branch that
 * always takes the newest child (the last regeneration) is used. Cycles in a damaged export end
 * the walk instead of looping.
 * @param {Record<string, unknown>} mapping
 * @param {unknown} currentNode
 * @returns {Record<string, unknown>[]}
 */
export function activeBranch (mapping, currentNode) {
  /** @param {unknown} id */
  const node = (id) => typeof id === 'string' && Object.hasOwn(mapping, id) && isObject(mapping[id]) ? /** @type {Record<string, unknown>} */ (mapping[id]) : undefined
  const leaf = node(currentNode) !== undefined ? /** @type {string} */ (currentNode) : newestLeaf(mapping, node)
  const branch = []
  const visited = new Set()
  for (let id = leaf; id !== undefined && !visited.has(id);) {
    visited.add(id)
    const n = node(id)
    if (n === undefined) break
    branch.push(n)
    id = typeof n.parent === 'string' ? n.parent : undefined
  }
  return branch.reverse()
}

/**
 * @param {Record<string, unknown>} mapping
 * @param {(id: unknown) => Record<string, unknown> | undefined} node
 * @returns {string | undefined}
 */
function newestLeaf (mapping, node) {
  const root = Object.keys(mapping).find((id) => node(node(id)?.parent) === undefined)
  let id = root
  const visited = new Set()
  while (id !== undefined && !visited.has(id)) {
    visited.add(id)
    const children = node(id)?.children
    const next = Array.isArray(children) ? children.filter((c) => node(c) !== undefined).at(-1) : undefined
    if (next === undefined) break
    id = next
  }
  return id
}

/**
 * @param {Record<string, unknown>} node
 * @returns {null | Record<string, unknown>}
 */
function toMessage (node) {
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
        else if (typeof part.asset_pointer === 'string') {
          attachments.push({
            type: typeof part.content_type === 'string' ? part.content_type.replace(/_asset_pointer$/, '') : 'file',
            ref: part.asset_pointer,
            ...(positiveInt(part.width) ? { width: part.width } : {}),
            ...(positiveInt(part.height) ? { height: part.height } : {})
          })
        }
      }
    }
  } else if (typeof content.text === 'string') texts.push(content.text) // code, execution_output, tether_quote
  else if (typeof content.result === 'string') texts.push(content.result) // tether_browsing_display

  const text = texts.join('\n')
  if (text.trim() === '' && attachments.length === 0) return null
  const createdAt = isoTime(m.create_time)
  const model = role === 'assistant' ? nonEmptyString(metadata.model_slug) : undefined
  const name = role === 'tool' ? nonEmptyString(author.name) : undefined
  return {
    id: nonEmptyString(m.id) ?? String(node.id),
    role,
    text,
    contentType,
    ...(createdAt !== undefined ? { createdAt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(attachments.length > 0 ? { attachments } : {})
  }
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

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isObject (v) { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** @param {unknown} v @returns {string | undefined} */
function nonEmptyString (v) { return typeof v === 'string' && v !== '' ? v : undefined }

/** @param {unknown} v @returns {v is number} */
function positiveInt (v) { return Number.isInteger(v) && /** @type {number} */ (v) > 0 }
