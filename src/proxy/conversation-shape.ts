// Conversation detail bodies in both shapes the upstream may use (docs/protocol.md §4): flat
// `{id, speakers, messages: [{participant_id, participant_type, mimetype, ...}]}` or wrapped
// `{success, conversation: {..., messages: [{participantId, participantType, mimeType, ...}]}}`.
// Pure: the offline cache uses these to show chats exchanged after the detail was last fetched,
// in the same shape the app already knows, and to empty a conversation after `clear`.

export interface ConversationExchange {
  /** ms since epoch when the reply completed. */
  at: number
  request: { data: string, mimeType: string }
  reply: { data: string, mimeType: string }
}

type Json = Record<string, unknown>

function isObject (v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** The object holding `messages`, and whether its fields are camelCase. */
function conversationOf (body: unknown): { conv: Json, camel: boolean } | null {
  if (!isObject(body)) return null
  if (isObject(body.conversation)) return { conv: body.conversation, camel: true }
  if (typeof body.id === 'string' || Array.isArray(body.messages)) return { conv: body, camel: false }
  return null
}

function speakerId (conv: Json, type: 'account' | 'character'): string | null {
  if (!Array.isArray(conv.speakers)) return null
  const s = conv.speakers.find((x) => isObject(x) && x.type === type) as Json | undefined
  return typeof s?.id === 'string' ? s.id : null
}

function message (camel: boolean, fields: { id: string, content: string, mimeType: string, participantId: string | null, participantType: string, created: string | number }): Json {
  return camel
    ? { id: fields.id, content: fields.content, mimeType: fields.mimeType, participantId: fields.participantId, participantType: fields.participantType, created: fields.created }
    : { id: fields.id, content: fields.content, mimetype: fields.mimeType, participant_id: fields.participantId, participant_type: fields.participantType, created: fields.created }
}

/** A copy of `body` with the exchanges appended as messages (same shape, same `created` type). */
export function withExchanges (body: unknown, exchanges: ConversationExchange[]): unknown {
  if (exchanges.length === 0) return body
  const copy: unknown = structuredClone(body)
  const found = conversationOf(copy)
  if (found === null) return body
  const { conv, camel } = found
  const messages = Array.isArray(conv.messages) ? conv.messages : []
  const last = messages[messages.length - 1] as Json | undefined
  const numeric = typeof last?.created === 'number'
  const stamp = (ms: number): string | number => numeric ? ms : new Date(ms).toISOString()
  const account = speakerId(conv, 'account')
  const character = speakerId(conv, 'character')
  for (const ex of exchanges) {
    messages.push(message(camel, { id: `local-${ex.at}-request`, content: ex.request.data, mimeType: ex.request.mimeType, participantId: account, participantType: 'account', created: stamp(ex.at) }))
    messages.push(message(camel, { id: `local-${ex.at}-reply`, content: ex.reply.data, mimeType: ex.reply.mimeType, participantId: character, participantType: 'character', created: stamp(ex.at) }))
  }
  conv.messages = messages
  return copy
}

/** A copy of `body` with no messages (the conversation stays, as after the upstream's clear). */
export function withoutMessages (body: unknown): unknown {
  const copy: unknown = structuredClone(body)
  const found = conversationOf(copy)
  if (found === null) return body
  found.conv.messages = []
  return copy
}

/** The text or audio of a chat request/reply, whichever field carries it (`data` or `message`). */
export function chatPayload (body: unknown): { data: string, mimeType: string } | null {
  if (!isObject(body)) return null
  const data = typeof body.data === 'string' ? body.data : typeof body.message === 'string' ? body.message : null
  if (data === null) return null
  const mimeType = typeof body.mimeType === 'string' ? body.mimeType : 'text/plain'
  return { data, mimeType }
}
