// A real daemon process from a checkout's compiled JavaScript (`dist/`, built when older than
// `src/`), so benches can run an older checkout (--base DIR) and the current one side by side
// (started by the benches' one launcher, daemon.ts).
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { launchDaemon, REPO, type RunningDaemon } from './daemon.js'

function newestMtime (dir: string): number {
  let newest = 0
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs)
  }
  return newest
}

/** Builds `dir` as its `npm run build` does (with the current checkout's TypeScript) when its dist/ is missing or older than src/. */
export function ensureBuilt (dir: string): void {
  const dist = join(dir, 'dist')
  if (existsSync(join(dist, 'cli/entry.js')) && newestMtime(dist) >= newestMtime(join(dir, 'src'))) return
  console.error(`  building ${dir} …`)
  execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' })
  // the build's later steps, where that checkout has them
  const validator = join(dir, 'scripts/build-config-validator.mjs')
  if (existsSync(validator)) execFileSync(process.execPath, [validator], { stdio: 'inherit' })
}

/** Starts `<dir>/dist/cli/entry.js daemon` (with the node flags of `<dir>`'s launcher, as `hearth daemon` runs) on `home`, sync and dashboard off unless `env` says otherwise, and resolves once it printed `ready`; stop leaves the home. */
export async function startDistDaemon (dir: string, home: string, opts: { env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<RunningDaemon> {
  return await launchDaemon({
    checkout: dir,
    run: 'dist',
    home,
    env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_UI: 'false', ...opts.env },
    ...(opts.nodeArgs !== undefined ? { nodeArgs: opts.nodeArgs } : {}),
    until: 'ready'
  })
}
