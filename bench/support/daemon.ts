// A real daemon process on a temp home for the benches that measure it over its socket.
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launcherSettings } from './launcher.js'
import type { Readable } from 'node:stream'
import { endsWithBench } from './children.js'

export interface BenchDaemon {
  home: string
  pid: number
  socketPath: string
  /** Everything the daemon printed on stdout so far. */
  output (): string
  /** SIGTERM, wait for the exit, remove the home. */
  stop (): Promise<void>
}

const REPO = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Starts `hearth daemon` with `args` on `home` (a new temp folder by default) and waits for 'ready'.
 * `checkout`: run the compiled `dist/` of that checkout (another commit, for side-by-side runs)
 * instead of this one's sources under tsx.
 */
export async function startBenchDaemon (opts: { name: string, args?: string[], home?: string, env?: Record<string, string>, checkout?: string }): Promise<BenchDaemon> {
  const home = opts.home ?? await mkdtemp(join(tmpdir(), `hearth-bench-${opts.name}-`))
  const entry = opts.checkout === undefined ? ['--import', 'tsx', join(REPO, 'src/cli/entry.ts')] : [join(opts.checkout, 'dist/cli/entry.js')]
  // with the node flags of that checkout's launcher, as `hearth daemon` runs
  const launcher = launcherSettings(opts.checkout ?? REPO)
  const daemon: ChildProcessByStdio<null, Readable, null> = endsWithBench(spawn(process.execPath, [...launcher.flags, ...entry, 'daemon', ...(opts.args ?? [])], {
    cwd: opts.checkout ?? REPO,
    env: { ...launcher.env, PATH: process.env.PATH, HEARTH_HOME: home, HEARTH_LOG_LEVEL: 'warn', HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', ...opts.env },
    stdio: ['ignore', 'pipe', 'inherit']
  }))
  let out = ''
  daemon.stdout.on('data', (c: Buffer) => { out += c.toString() })
  while (!out.includes('\nready\n')) {
    if (daemon.exitCode !== null) throw new Error('daemon exited:\n' + out)
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    home,
    pid: daemon.pid!,
    socketPath: join(home, 'run', 'hearth.sock'),
    output: () => out,
    async stop () {
      daemon.kill('SIGTERM')
      if (daemon.exitCode === null) await new Promise((r) => daemon.once('exit', r))
      await rm(home, { recursive: true, force: true })
    }
  }
}
