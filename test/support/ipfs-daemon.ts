// A real Kubo-RPC-compatible IPFS node for tests and benches: the js-ipfs daemon (npm `ipfs`
// 0.66.1), installed apart from the project in .ipfs-rpc/ by scripts/install-ipfs-rpc.sh (run here
// once, under a lock, when missing, so `npm ci && npm test` stays the one command).
//
// Every node gets a fresh repo in a temp folder and is fully offline: `--offline`, no bootstrap
// peers, no delegates, no preload, no MDNS/webRTC-star, no swarm listeners, no gateway, no gRPC;
// only the RPC API, on 127.0.0.1 at a port picked free here (kept across restarts so the backend's
// URL stays valid). `sockets()` reads the kernel's socket tables so a test can prove nothing else
// was opened.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { open, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { TestContext } from 'node:test'
import { tempDir } from './tmp.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const IPFS_CLI = join(REPO_ROOT, '.ipfs-rpc', 'node_modules', 'ipfs', 'src', 'cli.js')
const INSTALL_SCRIPT = join(REPO_ROOT, 'scripts', 'install-ipfs-rpc.sh')
const POLYFILL = join(REPO_ROOT, 'test', 'support', 'ipfs-daemon-polyfill.mjs')
const START_TIMEOUT_MS = 60_000

export interface IpfsDaemon {
  /** RPC API base, e.g. http://127.0.0.1:40123 (kubo-rpc-client adds /api/v0). */
  apiUrl: string
  repoPath: string
  /** Pid of the running daemon (changes on restart). */
  readonly pid: number
  /** SIGTERM (or SIGKILL with `{ kill: true }`) the whole process group and wait for it to exit. */
  stop (opts?: { kill?: boolean }): Promise<void>
  /** Start again on the same repo and port. */
  restart (): Promise<void>
  /** `jsipfs cat <cid>` run as a separate CLI process against this daemon: independent of our client. */
  catWithCli (cid: string): Promise<Uint8Array>
  /** Freeze / thaw the daemon (SIGSTOP / SIGCONT): it keeps its port but answers nothing. */
  pause (): void
  resume (): void
  /** The daemon's TCP/UDP sockets as the kernel lists them. */
  sockets (): Promise<SocketEntry[]>
}

export interface SocketEntry {
  table: 'tcp' | 'tcp6' | 'udp' | 'udp6'
  local: { address: string; port: number }
  remote: { address: string; port: number }
  /** Bound to loopback and, when connected, talking to loopback. */
  loopbackOnly: boolean
}

type After = Pick<TestContext, 'after'>

let installing: Promise<void> | undefined

/** Installs the daemon into .ipfs-rpc/ if it is not there yet (idempotent, locked in the script). */
export async function ensureIpfsInstalled (): Promise<void> {
  if (existsSync(IPFS_CLI)) return
  installing ??= promisify(execFile)('bash', [INSTALL_SCRIPT], { cwd: REPO_ROOT, timeout: 15 * 60_000 })
    .then(() => {
      if (!existsSync(IPFS_CLI)) throw new Error(`ipfs install did not produce ${IPFS_CLI}`)
    })
  await installing
}

export async function startIpfsDaemon (t: After): Promise<IpfsDaemon> {
  await ensureIpfsInstalled()
  const dir = await tempDir(t, 'hearth-ipfs-')
  const repoPath = join(dir, 'repo')
  const port = await freeLoopbackPort()
  const configPath = join(dir, 'init-config.json')
  await writeFile(configPath, JSON.stringify(offlineConfig(port)))
  const apiUrl = `http://127.0.0.1:${port}`

  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let log = ''

  const launch = async (): Promise<void> => {
    log = ''
    const proc = spawn(process.execPath, [
      '--import', POLYFILL, // js-ipfs 0.66 needs Promise.withResolvers on Node 20
      IPFS_CLI, 'daemon', '--offline', '--enable-preload=false',
      '--init-profile', 'test', '--init-config', configPath
    ], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: dir, IPFS_PATH: repoPath, NO_UPDATE_NOTIFIER: '1', NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true // its own process group, killed as a whole
    })
    child = proc
    exited = new Promise((resolve) => { proc.once('exit', () => { resolve() }) })
    const collect = (b: Buffer): void => { log = (log + b.toString()).slice(-8000) }
    proc.stdout!.on('data', collect)
    proc.stderr!.on('data', collect)
    const deadline = Date.now() + START_TIMEOUT_MS
    while (true) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`ipfs daemon exited during start:\n${log}`)
      if (/Daemon is ready/.test(log) && await apiAnswers(apiUrl)) return
      if (Date.now() > deadline) {
        killGroup(proc, 'SIGKILL')
        throw new Error(`ipfs daemon not ready after ${START_TIMEOUT_MS} ms:\n${log}`)
      }
      await sleep(100)
    }
  }

  const stop = async (opts: { kill?: boolean } = {}): Promise<void> => {
    const proc = child
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return
    killGroup(proc, opts.kill === true ? 'SIGKILL' : 'SIGTERM')
    const timer = setTimeout(() => { killGroup(proc, 'SIGKILL') }, 10_000)
    await exited
    clearTimeout(timer)
    // A killed daemon leaves its repo lock behind; the process is gone, so the lock is stale.
    await rm(join(repoPath, 'repo.lock'), { recursive: true, force: true })
  }

  // The test process may die without running t.after: take the daemon's group down with it.
  const onExit = (): void => { if (child !== undefined) killGroup(child, 'SIGKILL') }
  process.once('exit', onExit)
  t.after(async () => {
    await stop({ kill: true })
    process.removeListener('exit', onExit)
  })

  await launch()

  return {
    apiUrl,
    repoPath,
    get pid () { return child?.pid ?? -1 },
    stop,
    restart: async () => { await stop(); await launch() },
    catWithCli: async (cid: string) => {
      // stdout goes to a file, not a pipe: the js-ipfs CLI exits before a pipe has drained, which
      // truncates large outputs; writes to a file are synchronous and complete.
      const outPath = join(dir, `cat-${Date.now()}-${Math.random().toString(16).slice(2)}.out`)
      const out = await open(outPath, 'w')
      try {
        const proc = spawn(process.execPath, ['--import', POLYFILL, IPFS_CLI, '--api', apiUrl, 'cat', cid], {
          cwd: REPO_ROOT,
          env: { PATH: process.env.PATH, HOME: dir, IPFS_PATH: repoPath, NO_UPDATE_NOTIFIER: '1', NODE_ENV: 'test' },
          stdio: ['ignore', out.fd, 'pipe']
        })
        let stderr = ''
        proc.stderr!.on('data', (b: Buffer) => { stderr += b.toString() })
        const timer = setTimeout(() => { proc.kill('SIGKILL') }, 60_000)
        const code = await new Promise<number | null>((resolve) => { proc.once('exit', (c) => { resolve(c) }) })
        clearTimeout(timer)
        if (code !== 0) throw new Error(`jsipfs cat exited with ${String(code)}: ${stderr}`)
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

function offlineConfig (port: number): Record<string, unknown> {
  return {
    Addresses: {
      API: `/ip4/127.0.0.1/tcp/${port}`,
      Gateway: '',
      RPC: '',
      Swarm: [],
      Announce: [],
      NoAnnounce: [],
      Delegates: []
    },
    Bootstrap: [],
    Discovery: { MDNS: { Enabled: false }, webRTCStar: { Enabled: false } },
    Swarm: { DisableNatPortMap: true },
    Routing: { Type: 'none' },
    Pubsub: { Enabled: false }
  }
}

function killGroup (proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return
  try { process.kill(-proc.pid, signal) } catch { /* already gone */ }
}

async function apiAnswers (apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl}/api/v0/version`, { method: 'POST', signal: AbortSignal.timeout(2000) })
    await res.arrayBuffer()
    return res.ok
  } catch {
    return false
  }
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

/** Every TCP/UDP socket of the process, read from /proc: the kernel's own view, not the daemon's. */
export async function processSockets (pid: number): Promise<SocketEntry[]> {
  const inodes = new Set<string>()
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')
    const m = /^socket:\[(\d+)\]$/.exec(target)
    if (m !== null) inodes.add(m[1])
  }
  const out: SocketEntry[] = []
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '')
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 10 || !inodes.has(cols[9])) continue
      const local = parseProcAddress(cols[1])
      const remote = parseProcAddress(cols[2])
      const unconnected = remote.port === 0 && /^[0:.]+$/.test(remote.address)
      out.push({ table, local, remote, loopbackOnly: isLoopback(local.address) && (unconnected || isLoopback(remote.address)) })
    }
  }
  return out
}

/** /proc/net addresses are hex, each 32-bit word in host (little-endian) order. */
function parseProcAddress (hex: string): { address: string; port: number } {
  const [addr, port] = hex.split(':')
  const words = addr.match(/.{8}/g) ?? []
  const bytes = words.flatMap((w) => [w.slice(6, 8), w.slice(4, 6), w.slice(2, 4), w.slice(0, 2)].map((b) => parseInt(b, 16)))
  let address: string
  if (bytes.length === 4) {
    address = bytes.join('.')
  } else if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    address = `::ffff:${bytes.slice(12).join('.')}`
  } else {
    const groups: string[] = []
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
    address = groups.join(':')
  }
  return { address, port: parseInt(port, 16) }
}

function isLoopback (address: string): boolean {
  return address.startsWith('127.') || address.startsWith('::ffff:127.') || address === '0:0:0:0:0:0:0:1'
}

async function sleep (ms: number): Promise<void> { await new Promise((resolve) => setTimeout(resolve, ms)) }
