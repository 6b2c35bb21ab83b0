// Proxy overhead (docs/protocol.md §5: "well under a millisecond added per request; first stream chunk
// forwarded immediately"). One run, side by side: the upstream simulator called directly over
// loopback TCP versus through the proxy on the daemon's unix socket, at 1 and 64 concurrent
// clients: request latency p50/p99 for a cached JSON GET and a pass-through GET, and
// time-to-first-chunk of a chat stream.
//   node --import tsx bench/proxy.ts [requestsPerClient]
import '../src/polyfill.js'
import { Agent, request, type RequestOptions } from 'node:http'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { homeLayout } from '../src/home.js'
import { openDatabase, openKv, createDurableQueue } from '../src/db/index.js'
import { createProxy, type QueuedImageRequest } from '../src/proxy/index.js'
import { startUpstreamSim } from '../test/support/upstream-sim.js'
import { serveProxy } from '../test/support/upstream-proxy-harness.js'

interface Target { name: string, options: (path: string, method: string) => RequestOptions }

function once (opts: RequestOptions, body: string | undefined, firstChunk: boolean): Promise<number> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(opts, (res) => {
      let first = -1
      let body = ''
      res.on('data', (c: Buffer) => { if (first < 0) first = performance.now() - t0; if (body.length < 300) body += c.toString() })
      res.on('end', () => {
        if ((res.statusCode ?? 500) >= 300) reject(new Error(`status ${String(res.statusCode)}: ${body}`))
        else resolve(firstChunk ? first : performance.now() - t0)
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

function pct (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function measure (target: Target, clients: number, perClient: number, op: { path: string, method: string, body?: string, firstChunk?: boolean }): Promise<{ p50: number, p99: number, rps: number }> {
  const samples: number[] = []
  const t0 = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < perClient; i++) {
      samples.push(await once(target.options(op.path, op.method), op.body, op.firstChunk === true))
    }
  }))
  const wall = performance.now() - t0
  samples.sort((a, b) => a - b)
  return { p50: pct(samples, 0.5), p99: pct(samples, 0.99), rps: samples.length / (wall / 1000) }
}

// Each side runs in its own process (as in real use: app, daemon, remote service), so the
// numbers are not one event loop doing all three jobs.
function spawnRole (args: string[]): Promise<{ child: ChildProcess, info: any }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve({ child, info: JSON.parse(out.slice(0, nl)) })
    })
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${String(code)}`)))
  })
}

async function untilStdinEnds (): Promise<void> {
  process.stdin.resume()
  await new Promise((resolve) => process.stdin.on('end', resolve))
}

async function simRole (): Promise<void> {
  const sim = await startUpstreamSim()
  const ada = sim.state.addCharacter('Ada')
  process.stdout.write(JSON.stringify({ baseUrl: sim.baseUrl, token: sim.issueToken(), characterId: ada.id }) + '\n')
  await untilStdinEnds()
  await sim.stop()
}

async function proxyRole (baseUrl: string, token: string): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'hearth-bench-proxy-'))
  const home = homeLayout(root)
  const db = await openDatabase(home.index)
  const proxy = createProxy({ config: { baseUrl }, home, kv: openKv(db, 'proxy'), queue: createDurableQueue<QueuedImageRequest>(db, 'upstream-images') })
  await proxy.start()
  await proxy.credentials.save(token)
  const api = await serveProxy(home.socket, () => proxy)
  process.stdout.write(JSON.stringify({ socket: home.socket }) + '\n')
  await untilStdinEnds()
  await api.close()
  await proxy.stop()
  await db.close()
  await rm(root, { recursive: true, force: true })
}

async function driver (perClientArg: number): Promise<void> {
  const sim = await spawnRole(['--role', 'sim'])
  const { baseUrl, token, characterId } = sim.info as { baseUrl: string, token: string, characterId: string }
  const prox = await spawnRole(['--role', 'proxy', baseUrl, token])
  const socket = (prox.info as { socket: string }).socket

  const directAgent = new Agent({ keepAlive: true, maxSockets: 128 })
  const socketAgent = new Agent({ keepAlive: true, maxSockets: 128 })
  const { port } = new URL(baseUrl)
  const headers = (method: string): Record<string, string> => method === 'POST' ? { 'content-type': 'application/json' } : {}
  const direct: Target = { name: 'direct', options: (path, method) => ({ host: '127.0.0.1', port, path, method, agent: directAgent, headers: { ...headers(method), authorization: `Bearer ${token}` } }) }
  const proxied: Target = { name: 'proxy', options: (path, method) => ({ socketPath: socket, path, method, agent: socketAgent, headers: headers(method) }) }

  const conv = await new Promise<string>((resolve, reject) => {
    const req = request(proxied.options('/api/v0/conversations', 'POST'), (res) => {
      let b = ''
      res.on('data', (c: Buffer) => { b += c.toString() }).on('end', () => resolve(JSON.parse(b).id as string))
    })
    req.on('error', reject)
    req.end(JSON.stringify({ characterId }))
  })

  const ops = [
    { label: 'GET /conversations (JSON, cached)', path: '/api/v0/conversations', method: 'GET' },
    { label: 'GET /accounts/me (pass-through)', path: '/api/v0/accounts/me', method: 'GET' },
    { label: 'chat/stream time-to-first-chunk', path: `/api/v0/conversations/${conv}/chat/stream`, method: 'POST', body: JSON.stringify({ data: 'one two three four five', mimeType: 'text/plain' }), firstChunk: true }
  ]
  console.log(`proxy bench: node ${process.version}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}; simulator, proxy and clients in three processes`)
  console.log('operation                              clients  direct p50/p99 ms    proxy p50/p99 ms    added p50/p99 ms   proxy req/s')
  for (const clients of [1, 64]) {
    const perClient = perClientArg > 0 ? perClientArg : clients === 1 ? 2000 : 60
    for (const op of ops) {
      // Warm both paths (connections, JIT) before measuring.
      await measure(direct, clients, 20, op)
      await measure(proxied, clients, 20, op)
      const d = await measure(direct, clients, perClient, op)
      const p = await measure(proxied, clients, perClient, op)
      const f = (n: number): string => n.toFixed(3)
      console.log(`${op.label.padEnd(38)} ${String(clients).padStart(7)}  ${`${f(d.p50)}/${f(d.p99)}`.padStart(18)}  ${`${f(p.p50)}/${f(p.p99)}`.padStart(18)}  ${`${f(p.p50 - d.p50)}/${f(p.p99 - d.p99)}`.padStart(17)}  ${p.rps.toFixed(0).padStart(11)}`)
    }
  }

  directAgent.destroy()
  socketAgent.destroy()
  for (const child of [prox.child, sim.child]) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.stdin!.end()
    await exited
  }
}

const role = process.argv.indexOf('--role')
if (role >= 0 && process.argv[role + 1] === 'sim') await simRole()
else if (role >= 0 && process.argv[role + 1] === 'proxy') await proxyRole(process.argv[role + 2]!, process.argv[role + 3]!)
else await driver(Number(process.argv[2] ?? 0))
