// Helpers for tests that drop data files into a home and wait for the daemon to index them.
import { mkdir, writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import type { DaemonProcess } from './daemon.js'

export function envelopeFor (scope: string, data: Record<string, unknown>, collectedAt: string): Record<string, unknown> {
  return { $schema: `ipfs://shipped/${scope}`, version: '1.0', scope, collectedAt, data }
}

/** Writes like a careful connector: a temp file, then rename into place. */
export async function dropFile (dataDir: string, scope: string, name: string, content: string | Uint8Array): Promise<string> {
  const dir = join(dataDir, scope)
  await mkdir(dir, { recursive: true })
  const temp = join(dir, `.${name}.tmp`)
  await writeFile(temp, content)
  await rename(temp, join(dir, name))
  return `${scope}/${name}`
}

export async function waitFor<T> (what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== null && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

export async function statusOf (d: DaemonProcess): Promise<any> {
  const res = await d.request({ path: '/v1/status' })
  if (res.status !== 200) throw new Error(`status ${res.status}: ${res.body.toString()}`)
  return res.json
}
