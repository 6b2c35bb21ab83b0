// A test builder: its own viem wallet, signing every request to a daemon's builder listener
// (docs/protocol.md §3.8) the way a real third-party app does.
import type { Hex } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { signRequest, type SignedPayload } from '../../src/builders/web3-signed.js'

export interface BuilderResponse { status: number; json: any; headers: Headers }

export interface TestBuilder {
  account: PrivateKeyAccount
  address: `0x${string}`
  /** A signed request; `sign` overrides fields of the payload or the signing key. */
  request (req: { method?: string; path: string; body?: unknown; grantId?: string; sign?: Partial<SignedPayload> & { key?: PrivateKeyAccount; ttlSeconds?: number }; header?: string | null }): Promise<BuilderResponse>
  /** The Authorization header alone (for replays). */
  header (req: { method?: string; path: string; body?: unknown; grantId?: string; sign?: Partial<SignedPayload> & { key?: PrivateKeyAccount; ttlSeconds?: number } }): Promise<string>
  send (method: string, path: string, body: string | undefined, authorization: string | null): Promise<BuilderResponse>
}

export function testBuilder (privateKey: Hex, endpoint: { port: number; audience: string }): TestBuilder {
  const account = privateKeyToAccount(privateKey)
  const base = `http://127.0.0.1:${endpoint.port}`
  // identical requests within one second would carry one signature (refused as a replay), so
  // each gets its own exp, as a real client polling faster than once a second must do
  let seq = 0
  async function header (req: { method?: string; path: string; body?: unknown; grantId?: string; sign?: Partial<SignedPayload> & { key?: PrivateKeyAccount; ttlSeconds?: number } }): Promise<string> {
    const method = req.method ?? 'GET'
    const text = req.body === undefined ? '' : JSON.stringify(req.body)
    const key = req.sign?.key ?? account
    const { key: _k, ...over } = req.sign ?? {}
    return await signRequest(async (m) => await key.signMessage({ message: m }), {
      aud: endpoint.audience,
      method,
      uri: req.path,
      iss: account.address,
      ttlSeconds: 120 + (seq++ % 400),
      body: new TextEncoder().encode(text),
      ...(req.grantId !== undefined ? { grantId: req.grantId } : {}),
      ...over
    })
  }
  async function send (method: string, path: string, body: string | undefined, authorization: string | null): Promise<BuilderResponse> {
    const res = await fetch(base + path, {
      method,
      headers: { ...(authorization !== null ? { authorization } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body } : {})
    })
    const text = await res.text()
    let json: any
    try { json = text === '' ? undefined : JSON.parse(text) } catch { json = undefined }
    return { status: res.status, json, headers: res.headers }
  }
  return {
    account,
    address: account.address,
    header,
    send,
    async request (req) {
      const method = req.method ?? 'GET'
      const text = req.body === undefined ? undefined : JSON.stringify(req.body)
      const authorization = req.header !== undefined ? req.header : await header(req)
      return await send(method, req.path, text, authorization)
    }
  }
}
