// Runs the real daemon as a child process on a temp home, the way a user runs it, and talks to
// it over its real unix socket.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { homeLayout, type HomeLayout } from '../../src/home.js'
import { daemonRequest, type DaemonRequest, type DaemonResponse } from '../../src/client/daemon-client.js'
import { main } from '../../src/cli/main.js'
import { PassThrough } from 'node:stream'
import { tempDir } from './tmp.js'

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const ENTRY = join(REPO_ROOT, 'src/cli/entry.ts')
/** node arguments that run the TypeScript sources directly (no stale build). */
export const NODE_ARGS = ['--import', 'tsx', ENTRY]

export interface DaemonProcess {
  home: HomeLayout
  child: ChildProcess
  output: () => string
  request (req: DaemonRequest): Promise<DaemonResponse>
  /** SIGTERM and wait for exit. */
  stop (): Promise<number | null>
  kill (signal?: NodeJS.Signals): Promise<void>
  exited: Promise<number | null>
}

export interface StartOptions {
  home?: string
  env?: Record<string, string>
  args?: string[]
  /** Send the daemon's stderr (its log) to this file instead of the test. */
  stderrFile?: string
  /** The line on stdout that means the daemon is up (default 'ready'). */
  readyLine?: string
  /** Wait only until `/health` answers (its parts may still be starting) instead of for readyLine. */
  untilHealth?: boolean
  timeoutMs?: number
  /** node flags before the entry (the sources' entry only). */
  nodeArgs?: string[]
  /** Start the compiled daemon through bin/hearth.js as `hearth daemon` does (its #! line's flags apply) instead of the sources. */
  viaBin?: boolean
}

/** The launcher users run (`hearth`, `npm start`, the systemd unit); it runs the compiled dist/. */
export const BIN = join(REPO_ROOT, 'bin/hearth.js')

/** Environment for a test daemon: quiet logs, no sync listener on all interfaces, the dashboard on a free port. */
export function testEnv (extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HEARTH_LOG_LEVEL: 'warn',
    HEARTH_SYNC: 'false',
    HEARTH_MDNS: 'false',
    HEARTH_UI_LISTEN: '127.0.0.1:0',
    ...extra
  }
}

export async function startDaemonProcess (t: Pick<TestContext, 'after'>, opts: StartOptions = {}): Promise<DaemonProcess> {
  const root = opts.home ?? await tempDir(t, 'hearth-home-')
  const home = homeLayout(root)
  const stderrFd = opts.stderrFile === undefined ? null : openSync(opts.stderrFile, 'a')
  const [command, args] = opts.viaBin === true ? [BIN, []] : [process.execPath, [...(opts.nodeArgs ?? []), ...NODE_ARGS]]
  const child = spawn(command, [...args, 'daemon', ...(opts.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...testEnv(opts.env), HEARTH_HOME: root },
    stdio: ['ignore', 'pipe', stderrFd ?? 'pipe'],
    detached: true
  })
  if (stderrFd !== null) closeSync(stderrFd)
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const killGroup = (signal: NodeJS.Signals): void => { try { process.kill(-child.pid!, signal) } catch {} }
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup('SIGKILL')
      await exited
    }
  })
  const readyLine = opts.readyLine ?? 'ready'
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000)
  const up = async (): Promise<boolean> => opts.untilHealth === true
    ? await daemonRequest(home.socket, { path: '/health', timeoutMs: 2_000 }).then((r) => r.status === 200, () => false)
    : out.split('\n').includes(readyLine)
  while (!(await up())) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`daemon exited early (${String(child.exitCode)}):\n${out}`)
    if (Date.now() > deadline) { killGroup('SIGKILL'); throw new Error(`daemon not ready in time:\n${out}`) }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    home,
    child,
    output: () => out,
    request: async (req) => await daemonRequest(home.socket, req),
    async stop () {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return await exited
    },
    async kill (signal = 'SIGKILL') {
      killGroup(signal)
      await exited
    },
    exited
  }
}

/** Runs a CLI command in-process against a home, capturing its output. */
/** Runs the CLI in-process on `home` (test environment, plus `env`). */
export async function runCli (home: HomeLayout, args: string[], input?: string, env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const stdin = new PassThrough()
  let o = ''
  let e = ''
  stdout.on('data', (c: Buffer) => { o += c.toString() })
  stderr.on('data', (c: Buffer) => { e += c.toString() })
  stdin.end(input ?? '')
  const code = await main(['--home', home.root, ...args], { stdout, stderr, stdin, env: { ...testEnv(env), HEARTH_HOME: home.root } })
  return { code, stdout: o, stderr: e }
}

/** Runs `hearth daemon` on `home` until it exits by itself (a start that fails), killed after a minute. */
export async function daemonUntilExit (home: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, 'daemon', ...args], { cwd: REPO_ROOT, env: { ...testEnv(env), HEARTH_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}
