// A real daemon process from a checkout's compiled JavaScript (`dist/`, built when older than
// `src/`), so benches can run an older checkout (--base DIR) and the current one side by side.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launcherSettings } from './launcher.js'
import { endsWithBench } from './children.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

function newestMtime (dir: string): number {
  let newest = 0
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs)
  }
  return newest
}

/** Compiles `dir` with the current checkout's TypeScript when its dist/ is missing or older than src/. */
export function ensureBuilt (dir: string): void {
  const dist = join(dir, 'dist')
  if (existsSync(join(dist, 'cli/entry.js')) && newestMtime(dist) >= newestMtime(join(dir, 'src'))) return
  console.error(`  building ${dir} …`)
  execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' })
}

export interface DistDaemon {
  child: ChildProcess
  home: string
  /** Everything printed on stdout so far. */
  output (): string
  call (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }>
  json<T = any> (method: string, path: string, body?: unknown): Promise<T>
  /** SIGTERM and wait for the exit (the home stays). */
  stop (): Promise<void>
}

/** Starts `<dir>/dist/cli/entry.js daemon` (with the node flags of `<dir>`'s launcher, as `hearth daemon` runs) on `home` and resolves once it printed `ready`. */
export async function startDistDaemon (dir: string, home: string, opts: { env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<DistDaemon> {
  const socketPath = join(home, 'run', 'hearth.sock')
  await rm(socketPath, { force: true })
  const launcher = launcherSettings(dir)
  const child = endsWithBench(spawn(process.execPath, [...launcher.flags, ...(opts.nodeArgs ?? []), join(dir, 'dist/cli/entry.js'), 'daemon'], {
    cwd: dir,
    env: { ...launcher.env, PATH: process.env.PATH, HEARTH_HOME: home, HEARTH_LOG_LEVEL: 'warn', HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_UI: 'false', ...opts.env },
    stdio: ['ignore', 'pipe', 'inherit']
  }))
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> => new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const headers: Record<string, string | number> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
    const r = request({ socketPath, agent, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    r.on('error', reject)
    r.end(payload)
  })
  while (!out.split('\n').includes('ready')) {
    if (child.exitCode !== null) throw new Error(`daemon in ${dir} exited with ${child.exitCode}:\n${out}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    child,
    home,
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
