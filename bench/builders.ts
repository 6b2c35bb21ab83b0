// Signed builder reads of a 1 KB file (docs/protocol.md §3.8, budget: p50 ≤ 2 ms with signature
// recovery) against the same reads over the owner socket, in one run on one daemon process, at
// 1 and 16 clients. Each signed request is signed beforehand (a signature works once), so the
// numbers are the daemon's: parse, recover, checks, grant, read, access-log write.
// Run: node --import tsx bench/builders.ts [--quick]
import '../src/polyfill.js'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request, type RequestOptions } from 'node:http'
import { startBenchDaemon } from './support/daemon.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { homeLayout } from '../src/home.js'
import { createIdentity } from '../src/identity/identity.js'
import { signRequest } from '../src/builders/web3-signed.js'

const quick = process.argv.includes('--quick')
const home = await mkdtemp(join(tmpdir(), 'hearth-bench-builders-'))
await createIdentity(homeLayout(home), { fresh: true })
const daemon = await startBenchDaemon({ name: 'builders', home, args: ['--set', 'builders.listen="127.0.0.1:0"', '--set', 'builders.rateLimitPerMinute=1000000'] })
const socketPath = daemon.socketPath
const out = daemon.output()
const m = /^builders {2}(\S+) {2}\(port (\d+)\)$/m.exec(out)
if (m === null) throw new Error('no builder listener:\n' + out)
const audience = m[1]!
const port = Number(m[2])

let agent = new Agent({ keepAlive: true, maxSockets: 64 })
function call (opts: RequestOptions, body?: string): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const r = request({ agent, ...opts }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), ms: performance.now() - started }))
    })
    r.on('error', reject)
    if (body !== undefined) r.end(body); else r.end()
  })
}
const owner = async (method: string, path: string, body?: unknown): Promise<any> => {
  const text = body === undefined ? undefined : JSON.stringify(body)
  const r = await call({ socketPath, method, path, headers: text === undefined ? {} : { 'content-type': 'application/json' } }, text)
  return JSON.parse(r.text)
}

// one 1 KB file, a registered builder, an approved grant
await owner('POST', '/v1/data/instagram.profile', { username: 'bench', bio: 'x'.repeat(1024 - 40) })
const builder = privateKeyToAccount(generatePrivateKey())
await owner('POST', '/v1/builders', { address: builder.address, publicKey: 'bench' })
const sign = async (m2: string): Promise<`0x${string}`> => await builder.signMessage({ message: m2 })
const path = '/v1/data/instagram.profile'
const askBody = JSON.stringify({ scopes: ['instagram.profile'] })
const ask = await call({ host: '127.0.0.1', port, method: 'POST', path: '/v1/access-requests', headers: { 'content-type': 'application/json', authorization: await signRequest(sign, { aud: audience, method: 'POST', uri: '/v1/access-requests', body: new TextEncoder().encode(askBody) }) } }, askBody)
const approved = await owner('POST', `/v1/access-requests/${String(JSON.parse(ask.text).id)}/approve`, {})
const grantId = approved.grant.grantId as string

// every header distinct (a signature works once): iat and exp vary within the allowed window
async function headers (n: number): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000)
  return await Promise.all(Array.from({ length: n }, async (_, i) => {
    const iat = now - (i % 50)
    return await signRequest(sign, { aud: audience, method: 'GET', uri: path, grantId, iat, exp: iat + 100 + (Math.floor(i / 50) % 400) })
  }))
}

async function measure (label: string, clients: number, total: number, one: (i: number) => Promise<{ status: number; ms: number }>): Promise<Record<string, string>> {
  const latencies: number[] = []
  let issued = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (issued < total) {
      const i = issued++
      const r = await one(i)
      if (r.status !== 200) throw new Error(`${label}: status ${r.status}`)
      latencies.push(r.ms)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p: number): string => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(2)
  return { variant: label, clients: String(clients), reads: String(total), 'reads/s': (total / seconds).toFixed(0), 'p50 ms': pct(0.5), 'p99 ms': pct(0.99) }
}

try {
  const n = quick ? 300 : 3000
  const rows: Array<Record<string, string>> = []
  const socketRead = async (): Promise<{ status: number; ms: number }> => await call({ socketPath, method: 'GET', path })
  // signed before any connection is opened (idle keep-alive sockets would time out meanwhile)
  const all = await headers(100 + 2 * n)
  const warm = all.slice(0, 100)
  const batches = [all.slice(100, 100 + n), all.slice(100 + n)]
  agent.destroy()
  agent = new Agent({ keepAlive: true, maxSockets: 64 })
  await measure('warm-up', 4, 100, socketRead)
  await measure('warm-up', 4, 100, async (i) => await call({ host: '127.0.0.1', port, method: 'GET', path, headers: { authorization: warm[i]! } }))
  for (const [k, clients] of [1, 16].entries()) {
    rows.push(await measure('owner socket', clients, n, socketRead))
    const signed = batches[k]!
    rows.push(await measure('signed (builder TCP)', clients, n, async (i) => await call({ host: '127.0.0.1', port, method: 'GET', path, headers: { authorization: signed[i]! } })))
  }
  console.table(rows)
  const log = await owner('GET', '/v1/access-logs?order=desc&limit=1')
  console.log(`access log: last entry ${String(log.entries[0]?.action)} ${String(log.entries[0]?.status)}; budget: signed read p50 ≤ 2 ms`)
} finally {
  agent.destroy()
  await daemon.stop()
}
