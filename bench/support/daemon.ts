// A real daemon process for the benches, one launcher for all of them: a checkout's compiled
// `dist/` with the node flags and environment of its launcher (as `hearth daemon` runs), this
// checkout's sources under tsx, or `bin/hearth.js` executed as users start it (bench/limits.ts,
// whose start rows must count the launcher itself), optionally in a network namespace of its own
// (mDNS); waited for until it prints `ready` or until `/health` answers; talked to over its socket.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { launcherSettings } from './launcher.js'
import { endsWithBench } from './children.js'

export const REPO = fileURLToPath(new URL('../../', import.meta.url))

/** The network namespace a default-configuration daemon runs in: its mDNS and sync listener stay off the real interfaces. */
const NETNS_SETUP = 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo'

export interface DaemonSpec {
  /** The checkout whose code runs (default this one). */
  checkout?: string
  /**
   * `dist`: its `dist/cli/entry.js` under node with its launcher's flags and environment;
   * `sources`: this checkout's `src/` under tsx (same flags); `bin`: its `bin/hearth.js` executed.
   */
  run: 'dist' | 'sources' | 'bin'
  home: string
  /** After `daemon` on its command line (e.g. `--set`). */
  args?: string[]
  /** Over the base environment (PATH, HEARTH_HOME, HEARTH_LOG_LEVEL=warn). */
  env?: NodeJS.ProcessEnv
  /** Node flags for this run only (e.g. a CPU profile), before the entry. */
  nodeArgs?: string[]
  /** In a fresh network namespace (`unshare -rn`), loopback with multicast: for sync with mDNS. */
  netns?: boolean
  /** Resolve once it printed `ready` (every part up) or once `/health` answers (the start rows). */
  until: 'ready' | 'health'
}

export interface RunningDaemon {
  child: ChildProcess
  pid: number
  home: string
  socketPath: string
  /** From the spawn until it was up (`until`). */
  startMs: number
  /** Everything printed on stdout so far. */
  output (): string
  call (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }>
  /** The answer's JSON; an answer of 300 or more throws. */
  json<T = any> (method: string, path: string, body?: unknown): Promise<T>
  /** SIGTERM and wait for the exit (the home stays). */
  stop (): Promise<void>
}

export async function launchDaemon (spec: DaemonSpec): Promise<RunningDaemon> {
  const checkout = spec.checkout ?? REPO
  const socketPath = join(spec.home, 'run', 'hearth.sock')
  await rm(socketPath, { force: true })
  const launcher = launcherSettings(checkout)
  const nodeArgs = spec.nodeArgs ?? []
  // `bin` without node flags of its own is executed (its #! line applies); with them (flags such as
  // --cpu-prof are refused in NODE_OPTIONS) node runs it with the #! line's flags and environment
  const direct = spec.run === 'bin' && nodeArgs.length === 0
  const entry = spec.run === 'bin' ? [join(checkout, 'bin/hearth.js')] : spec.run === 'sources' ? ['--import', 'tsx', join(REPO, 'src/cli/entry.ts')] : [join(checkout, 'dist/cli/entry.js')]
  const command = direct ? entry : [process.execPath, ...launcher.flags, ...nodeArgs, ...entry]
  const env = { ...(direct ? {} : launcher.env), PATH: process.env.PATH, HEARTH_HOME: spec.home, HEARTH_LOG_LEVEL: 'warn', ...spec.env }
  const argv = [...command, 'daemon', ...(spec.args ?? [])]
  const [file, args] = spec.netns === true
    ? ['unshare', ['-rn', 'sh', '-c', `${NETNS_SETUP} && exec "$@"`, 'sh', ...argv]]
    : [argv[0]!, argv.slice(1)]
  const started = performance.now()
  const child = endsWithBench(spawn(file, args, { cwd: checkout, env, stdio: ['ignore', 'pipe', 'inherit'] }))
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> => await new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
    const headers: Record<string, string | number> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
    const r = request({ socketPath, agent, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    r.on('error', reject)
    r.end(payload)
  })
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`daemon in ${checkout} exited with ${child.exitCode ?? child.signalCode}:\n${out}`)
    const up = spec.until === 'ready'
      ? out.split('\n').includes('ready')
      : await call('GET', '/health').then((r) => r.status === 200, () => false)
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, spec.until === 'ready' ? 20 : 5))
  }
  return {
    child,
    pid: child.pid!,
    home: spec.home,
    socketPath,
    startMs: performance.now() - started,
    output: () => out,
    call,
    async json (method, path, body) {
      const r = await call(method, path, body)
      if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${r.body.slice(0, 500)}`)
      return JSON.parse(r.body)
    },
    async stop () {
      agent.destroy()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    }
  }
}

export interface BenchDaemon {
  home: string
  pid: number
  socketPath: string
  /** Everything the daemon printed on stdout so far. */
  output (): string
  /** SIGTERM, wait for the exit, remove the home. */
  stop (): Promise<void>
}

/**
 * Starts `hearth daemon` with `args` on `home` (a new temp folder by default, removed by stop) and
 * waits for 'ready', sync off. `checkout`: run the compiled `dist/` of that checkout (another
 * commit, for side-by-side runs) instead of this one's sources under tsx.
 */
export async function startBenchDaemon (opts: { name: string, args?: string[], home?: string, env?: Record<string, string>, checkout?: string }): Promise<BenchDaemon> {
  const home = opts.home ?? await mkdtemp(join(tmpdir(), `hearth-bench-${opts.name}-`))
  const d = await launchDaemon({
    ...(opts.checkout !== undefined ? { checkout: opts.checkout, run: 'dist' } : { run: 'sources' }),
    home,
    ...(opts.args !== undefined ? { args: opts.args } : {}),
    env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', ...opts.env },
    until: 'ready'
  })
  return {
    home,
    pid: d.pid,
    socketPath: d.socketPath,
    output: d.output,
    async stop () {
      await d.stop()
      await rm(home, { recursive: true, force: true })
    }
  }
}
