// Chat-stream framing (docs/protocol.md §4). Pure. Both framings the upstream may use — SSE
// (`data: <json>\n\n`, optional `data: [DONE]`) and bare JSON objects separated by a blank line —
// delimit frames with an empty line, so one splitter serves both. The proxy forwards whole frames
// the moment their delimiter arrives: the client never sees half a frame, and when the upstream
// dies mid-stream the error event that ends the stream starts on a frame boundary.

export type Framing = 'sse' | 'bare'

export interface ChatChunk {
  id?: string
  object?: string
  created?: number
  model?: string
  choices?: Array<{ index?: number, delta?: { content?: string | null }, finish_reason?: string | null }>
}

export type ParsedFrame =
  | { kind: 'chunk', chunk: ChatChunk }
  | { kind: 'done' }
  | { kind: 'error', body: unknown }
  | { kind: 'ignored' }

const LF2 = Buffer.from('\n\n')
const CRLF2 = Buffer.from('\r\n\r\n')

export class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0)

  /** Feed bytes; returns the frames completed by them, each with its delimiter, bytes unchanged. */
  push (chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const frames: Buffer[] = []
    for (;;) {
      const a = this.pending.indexOf(LF2)
      const b = this.pending.indexOf(CRLF2)
      let end = -1
      if (a >= 0 && (b < 0 || a <= b)) end = a + LF2.length
      else if (b >= 0) end = b + CRLF2.length
      if (end < 0) break
      frames.push(this.pending.subarray(0, end))
      this.pending = this.pending.subarray(end)
    }
    return frames
  }

  /** Bytes received after the last complete frame. */
  rest (): Buffer { return this.pending }
}

export function detectFraming (contentType: string | undefined, firstFrame?: Buffer): Framing {
  if (contentType?.toLowerCase().includes('text/event-stream') === true) return 'sse'
  if (firstFrame !== undefined && /^\s*(data|event|id|retry)?:/.test(firstFrame.subarray(0, 16).toString('utf8'))) return 'sse'
  return 'bare'
}

/** Understand one frame of either framing (for the exchange cache and the CLI). */
export function parseFrame (frame: Buffer | string): ParsedFrame {
  const text = typeof frame === 'string' ? frame : frame.toString('utf8')
  const trimmed = text.trim()
  if (trimmed.length === 0) return { kind: 'ignored' }
  let payload = trimmed
  let event: string | undefined
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) {
    const data: string[] = []
    for (const line of trimmed.split(/\r?\n/)) {
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      else if (line.startsWith('event:')) event = line.slice(6).trim()
    }
    if (data.length === 0) return { kind: 'ignored' }
    payload = data.join('\n')
  }
  if (payload.trim() === '[DONE]') return { kind: 'done' }
  let json: unknown
  try { json = JSON.parse(payload) } catch { return { kind: 'ignored' } }
  if (event === 'error' || (json !== null && typeof json === 'object' && 'error' in json && !('choices' in json))) {
    return { kind: 'error', body: json }
  }
  if (json !== null && typeof json === 'object') return { kind: 'chunk', chunk: json as ChatChunk }
  return { kind: 'ignored' }
}

export function chunkText (chunk: ChatChunk): string {
  const c = chunk.choices?.[0]?.delta?.content
  return typeof c === 'string' ? c : ''
}

export function chunkFinished (chunk: ChatChunk): boolean {
  const r = chunk.choices?.[0]?.finish_reason
  return r !== null && r !== undefined
}

/** The frame that ends a stream with an error, in the stream's own framing. */
export function errorFrame (framing: Framing, body: unknown): string {
  const json = JSON.stringify(body)
  return framing === 'sse' ? `event: error\ndata: ${json}\n\n` : `${json}\n\n`
}
