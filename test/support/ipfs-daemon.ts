// A real Kubo daemon for tests and benches, built from its Go module by scripts/install-kubo.sh
// (run here once, under a lock, when missing, so `npm ci && npm test` stays the one command).
//
// Every node gets a fresh repo in a temp folder and stays on loopback: `--profile=test` (no
// bootstrap peers, mDNS off, loopback listeners on port 0) plus no routing at all (`Routing.Type`
// none: no public DHT), no AutoNAT/relay/NAT port mapping, no telemetry, TCP only. It still listens
// for peers on loopback (an IPFS Cluster peer's Kubo fetches from it over bitswap). Ports are
// chosen by Kubo (port 0) at the first start and written back into its config, so a restart keeps
// the RPC URL valid. `sockets()` reads the kernel's socket tables so a test can prove nothing
// else was opened.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { appendFile, mkdir, open, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import type { TestContext } from 'node:test'
import { tempDir } from './tmp.js'
import { installedTool, killGroup, sleep } from './go-tools.js'
import { processSockets, type SocketEntry } from './proc-sockets.js'

export type { SocketEntry } from './proc-sockets.js'

const START_TIMEOUT_MS = 60_000

export interface IpfsDaemon {
  /** RPC API base, e.g. http://127.0.0.1:40123 (kubo-rpc-client adds /api/v0). */
  apiUrl: string
  /** Its HTTP gateway, e.g. http://127.0.0.1:40124 (`/ipfs/<cid>`). */
  gatewayUrl: string
  /** Its libp2p peer ID and loopback swarm address with it (`/ip4/127.0.0.1/tcp/N/p2p/<id>`). */
  peerId: string
  swarmAddr: string
  repoPath: string
  /** Pid of the running daemon (changes on restart). */
  readonly pid: number
  /** SIGTERM (or SIGKILL with `{ kill: true }`) the whole process group and wait for it to exit. */
  stop (opts?: { kill?: boolean }): Promise<void>
  /** Start again on the same repo and ports. */
  restart (): Promise<void>
  /** `ipfs cat <cid>` run as a separate CLI process against this daemon: independent of our client. */
  catWithCli (cid: string): Promise<Uint8Array>
  /** Freeze / thaw the daemon (SIGSTOP / SIGCONT): it keeps its port but answers nothing. */
  pause (): void
  resume (): void
  /** The daemon's TCP/UDP sockets as the kernel lists them. */
  sockets (): Promise<SocketEntry[]>
}

type After = Pick<TestContext, 'after'>

/** Builds Kubo if it is not there yet (idempotent, locked in the script); resolves to the binary. */
export async function ensureIpfsInstalled (): Promise<string> { return await installedTool('install-kubo.sh') }

/** The environment every Kubo process of the tests runs with: its repo, no telemetry, no update checks. */
export function kuboEnv (home: string, repoPath: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, IPFS_PATH: repoPath, IPFS_TELEMETRY: 'off', GOLOG_LOG_LEVEL: process.env.HEARTH_KUBO_LOG_LEVEL ?? 'error' }
}

export interface IpfsDaemonOptions {
  /** The gateway answers only from the node's own blocks (`Gateway.NoFetch`). */
  gatewayNoFetch?: boolean
}

export async function startIpfsDaemon (t: After, opts: IpfsDaemonOptions = {}): Promise<IpfsDaemon> {
  const bin = await ensureIpfsInstalled()
  const dir = await tempDir(t, 'hearth-kubo-')
  const repoPath = join(dir, 'repo')
  const env = kuboEnv(dir, repoPath)
  await promisify(execFile)(bin, ['init', '--profile=test', '--empty-repo'], { env, timeout: 60_000 })
  await rewriteConfig(repoPath, (c) => {
    loopbackOnly(c)
    c.Gateway = { ...c.Gateway, NoFetch: opts.gatewayNoFetch === true }
  })

  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let log = ''
  const addrs = { api: '', gateway: '', swarm: '' }
  // HEARTH_TEST_LOG_DIR keeps the daemon's whole log (at HEARTH_KUBO_LOG_LEVEL) for a failing run
  const keptLog = process.env.HEARTH_TEST_LOG_DIR === undefined || process.env.HEARTH_TEST_LOG_DIR === '' ? null : join(process.env.HEARTH_TEST_LOG_DIR, `kubo-${basename(dir)}.log`)
  if (keptLog !== null) await mkdir(process.env.HEARTH_TEST_LOG_DIR!, { recursive: true })

  const launch = async (): Promise<void> => {
    log = ''
    const proc = spawn(bin, ['daemon', '--migrate=false'], {
      env, stdio: ['ignore', 'pipe', 'pipe'], detached: true // its own process group, killed as a whole
    })
    child = proc
    exited = new Promise((resolve) => { proc.once('exit', () => { resolve() }) })
    const collect = (b: Buffer): void => {
      log = (log + b.toString()).slice(-8000)
      if (keptLog !== null) void appendFile(keptLog, b).catch(() => {})
    }
    if (keptLog !== null) await appendFile(keptLog, `--- daemon start ${new Date().toISOString()}\n`)
    proc.stdout!.on('data', collect)
    proc.stderr!.on('data', collect)
    const deadline = Date.now() + START_TIMEOUT_MS
    while (true) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`kubo daemon exited during start:\n${log}`)
      if (/Daemon is ready/.test(log)) break
      if (Date.now() > deadline) {
        killGroup(proc, 'SIGKILL')
        throw new Error(`kubo daemon not ready after ${START_TIMEOUT_MS} ms:\n${log}`)
      }
      await sleep(100)
    }
    addrs.api = listening(log, 'RPC API server')
    addrs.gateway = listening(log, 'Gateway server')
    addrs.swarm = await swarmAddress(httpUrl(addrs.api))
    // the ports Kubo chose become its configuration: a restart keeps them
    await rewriteConfig(repoPath, (c) => {
      c.Addresses.API = addrs.api
      c.Addresses.Gateway = addrs.gateway
      c.Addresses.Swarm = [addrs.swarm]
    })
  }

  const stop = async (opts: { kill?: boolean } = {}): Promise<void> => {
    const proc = child
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return
    if (opts.kill !== true) killGroup(proc, 'SIGCONT') // a paused daemon cannot handle SIGTERM
    killGroup(proc, opts.kill === true ? 'SIGKILL' : 'SIGTERM')
    const timer = setTimeout(() => { killGroup(proc, 'SIGKILL') }, 15_000)
    await exited
    clearTimeout(timer)
    // A killed daemon leaves its api file behind; the process is gone, so it is stale.
    await rm(join(repoPath, 'api'), { force: true })
  }

  // The test process may die without running t.after: take the daemon's group down with it.
  const onExit = (): void => { if (child !== undefined) killGroup(child, 'SIGKILL') }
  process.once('exit', onExit)
  t.after(async () => {
    await stop({ kill: true })
    process.removeListener('exit', onExit)
  })

  await launch()
  const identity = JSON.parse(await readFile(join(repoPath, 'config'), 'utf8')).Identity.PeerID as string

  return {
    apiUrl: httpUrl(addrs.api),
    gatewayUrl: httpUrl(addrs.gateway),
    peerId: identity,
    swarmAddr: `${addrs.swarm}/p2p/${identity}`,
    repoPath,
    get pid () { return child?.pid ?? -1 },
    stop,
    restart: async () => { await stop(); await launch() },
    catWithCli: async (cid: string) => {
      const outPath = join(dir, `cat-${Date.now()}-${Math.random().toString(16).slice(2)}.out`)
      const out = await open(outPath, 'w')
      try {
        const proc = spawn(bin, ['--api', addrs.api, 'cat', cid], { env, stdio: ['ignore', out.fd, 'pipe'] })
        let stderr = ''
        proc.stderr!.on('data', (b: Buffer) => { stderr += b.toString() })
        const timer = setTimeout(() => { proc.kill('SIGKILL') }, 60_000)
        const code = await new Promise<number | null>((resolve) => { proc.once('exit', (c) => { resolve(c) }) })
        clearTimeout(timer)
        if (code !== 0) throw new Error(`ipfs cat exited with ${String(code)}: ${stderr}`)
      } finally {
        await out.close()
      }
      return new Uint8Array(await readFile(outPath))
    },
    pause: () => { if (child !== undefined) killGroup(child, 'SIGSTOP') },
    resume: () => { if (child !== undefined) killGroup(child, 'SIGCONT') },
    sockets: async () => child?.pid === undefined ? [] : await processSockets(child.pid)
  }
}

/** On top of `--profile=test`: nothing that reaches past loopback or phones home. */
function loopbackOnly (c: any): void {
  c.Addresses.API = '/ip4/127.0.0.1/tcp/0'
  c.Addresses.Gateway = '/ip4/127.0.0.1/tcp/0'
  c.Addresses.Swarm = ['/ip4/127.0.0.1/tcp/0']
  c.Addresses.Announce = []
  c.Addresses.NoAnnounce = []
  c.Bootstrap = []
  c.Routing = { ...c.Routing, Type: 'none' }
  c.Discovery = { ...c.Discovery, MDNS: { Enabled: false } }
  c.AutoNAT = { ...c.AutoNAT, ServiceMode: 'disabled' }
  c.Swarm = {
    ...c.Swarm,
    DisableNatPortMap: true,
    RelayClient: { Enabled: false },
    RelayService: { Enabled: false },
    Transports: { ...c.Swarm?.Transports, Network: { TCP: true, QUIC: false, WebTransport: false, WebRTCDirect: false, Websocket: false, Relay: false } }
  }
  c.Plugins = { Plugins: { ...c.Plugins?.Plugins, telemetry: { Config: { Mode: 'off' } } } }
  // nothing fetched from the network at start: no auto-configuration, so no "auto" values either
  c.AutoConf = { ...c.AutoConf, Enabled: false }
  c.DNS = { ...c.DNS, Resolvers: {} }
  c.Routing.DelegatedRouters = []
  c.Ipns = { ...c.Ipns, DelegatedPublishers: [] }
  c.AutoTLS = { ...c.AutoTLS, Enabled: false }
}

async function rewriteConfig (repoPath: string, edit: (config: any) => void): Promise<void> {
  const path = join(repoPath, 'config')
  const config = JSON.parse(await readFile(path, 'utf8'))
  edit(config)
  await writeFile(path, JSON.stringify(config, null, 2))
}

/** Where Kubo says a server listens, as a multiaddr (it prints `/ip4/…/tcp/N` or `host:port`). */
function listening (log: string, what: string): string {
  const m = new RegExp(`${what} listening on (?:/ip4/)?127\\.0\\.0\\.1(?:/tcp/|:)(\\d+)`).exec(log)
  if (m === null) throw new Error(`kubo did not say where its ${what} listens:\n${log}`)
  return `/ip4/127.0.0.1/tcp/${m[1]}`
}

/** The node's loopback TCP swarm address, from its own `id`. */
async function swarmAddress (apiUrl: string): Promise<string> {
  const res = await fetch(`${apiUrl}/api/v0/id`, { method: 'POST', signal: AbortSignal.timeout(10_000) })
  const id = await res.json() as { Addresses?: string[] | null }
  const addr = (id.Addresses ?? []).map((a) => a.replace(/\/p2p\/.*$/, '')).find((a) => /^\/ip4\/127\.0\.0\.1\/tcp\/\d+$/.test(a))
  if (addr === undefined) throw new Error(`kubo has no loopback TCP swarm address: ${JSON.stringify(id.Addresses)}`)
  return addr
}

function httpUrl (multiaddr: string): string {
  const [, , host, , port] = multiaddr.split('/')
  return `http://${host}:${port}`
}


/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freeLoopbackPort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      server.close(() => { resolve(port) })
    })
  })
}

