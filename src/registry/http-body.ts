// Reading an HTTP response body with a byte limit enforced while it streams, so a misbehaving
// server cannot make Hearth buffer more than it is willing to accept.

export class BodyTooLargeError extends Error {
  constructor (readonly maxBytes: number) {
    super(`response body larger than ${maxBytes} bytes`)
    this.name = 'BodyTooLargeError'
  }
}

/** The whole body, or BodyTooLargeError past `maxBytes`. Cancels the stream when it stops early. */
export async function readBodyLimited (response: Response, maxBytes: number): Promise<Uint8Array> {
  try {
    const declared = Number(response.headers.get('content-length'))
    if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(maxBytes)
    if (response.body === null) return new Uint8Array(0)
    const chunks: Uint8Array[] = []
    let total = 0
    const reader = response.body.getReader()
    for (;;) {
      const step = await reader.read()
      if (step.done) break
      total += step.value.byteLength
      if (total > maxBytes) throw new BodyTooLargeError(maxBytes)
      chunks.push(step.value)
    }
    const out = new Uint8Array(total)
    let offset = 0
    for (const c of chunks) { out.set(c, offset); offset += c.byteLength }
    return out
  } finally {
    await response.body?.cancel().catch(() => {})
  }
}
