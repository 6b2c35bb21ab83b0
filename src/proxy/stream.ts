// Passing a chat stream from the upstream to the app frame by frame, the moment each frame is
// complete (never the whole reply). The app going away aborts the upstream request; the upstream
// dying or going silent ends the app's stream with an error frame in the stream's own framing.
import type { ServerResponse } from 'node:http'
import { HearthError, toErrorBody } from '../errors.js'
import { downstreamResponseHeaders } from './headers.js'
import { chunkFinished, chunkText, detectFraming, errorFrame, FrameSplitter, parseFrame, type Framing } from './stream-frames.js'
import type { UpstreamResponse } from './upstream.js'

export interface StreamOutcome {
  /** The stream ended as the upstream meant it to (finish_reason or [DONE], then end of body). */
  completed: boolean
  /** The reply text gathered from the deltas. */
  text: string
  clientGone: boolean
}

export async function pipeStream (upstream: UpstreamResponse, res: ServerResponse, opts: { idleTimeoutMs: number }): Promise<StreamOutcome> {
  const message = upstream.message
  const contentType = message.headers['content-type']
  const headers = downstreamResponseHeaders(message.headers)
  headers['cache-control'] = 'no-cache'
  res.writeHead(upstream.status, headers)
  res.flushHeaders()

  const splitter = new FrameSplitter()
  let framing: Framing | undefined
  let text = ''
  let finished = false
  let done = false

  return await new Promise<StreamOutcome>((resolve) => {
    let idle: NodeJS.Timeout | undefined
    const armIdle = (): void => {
      clearTimeout(idle)
      idle = setTimeout(() => {
        fail(new HearthError('TIMEOUT', `the conversation service sent nothing for ${opts.idleTimeoutMs} ms in the middle of the reply`))
      }, opts.idleTimeoutMs)
    }

    function settle (outcome: Omit<StreamOutcome, 'text'>): void {
      if (done) return
      done = true
      clearTimeout(idle)
      resolve({ ...outcome, text })
    }

    function fail (err: HearthError): void {
      if (done) return
      upstream.abort()
      if (!res.destroyed && !res.writableEnded) {
        // A half frame still in the splitter is dropped: the app gets whole frames, then the error frame.
        res.end(errorFrame(framing ?? detectFraming(contentType), toErrorBody(err)))
      }
      settle({ completed: false, clientGone: false })
    }

    res.on('close', () => {
      if (done) return
      if (!res.writableFinished) {
        upstream.abort()
        settle({ completed: false, clientGone: true })
      }
    })

    message.on('data', (chunk: Buffer) => {
      armIdle()
      for (const frame of splitter.push(chunk)) {
        framing ??= detectFraming(contentType, frame)
        const parsed = parseFrame(frame)
        if (parsed.kind === 'chunk') {
          text += chunkText(parsed.chunk)
          if (chunkFinished(parsed.chunk)) finished = true
        } else if (parsed.kind === 'done') finished = true
        if (!res.write(frame) && !message.isPaused()) {
          // The app reads slower than the upstream sends: hold the upstream, not a growing buffer.
          message.pause()
          res.once('drain', () => message.resume())
        }
      }
    })
    message.on('end', () => {
      if (done) return
      if (!message.complete) { fail(new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service stopped in the middle of the reply')); return }
      const rest = splitter.rest()
      if (rest.length > 0) {
        const parsed = parseFrame(rest)
        if (parsed.kind === 'chunk') { text += chunkText(parsed.chunk); if (chunkFinished(parsed.chunk)) finished = true } else if (parsed.kind === 'done') finished = true
      }
      res.end(rest.length > 0 ? rest : undefined)
      settle({ completed: finished, clientGone: false })
    })
    message.on('error', () => { fail(new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service stopped in the middle of the reply')) })
    message.on('close', () => {
      if (!done && !message.complete) fail(new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service stopped in the middle of the reply'))
    })
    armIdle()
  })
}
