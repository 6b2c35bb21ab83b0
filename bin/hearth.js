#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8
// Runs the compiled CLI (npm ci builds dist/ through the prepare script).
// The #! line holds the daemon's process-level settings, the one place they are set: `hearth`
// (npm's link to this file), `npm start` and the systemd unit all execute this file.
// --max-semi-space-size=8: V8's young generation grows to 2 × 16 MB by default and never shrinks
// while the daemon is idle; 8 MB semi-spaces keep an idle daemon ~10 MB smaller. 4 MB would save
// ~20 MB more but made sync's receiver measurably slower (more of its in-flight files survive
// a scavenge). MALLOC_ARENA_MAX=2: glibc gives every thread that mallocs (V8's and libuv's
// workers) an arena of its own, ~6 MB resident in nine of them when idle; two hold ~2 MB.
// Numbers and what was tried: README, "Idle memory".
import module from 'node:module'
import { lstatSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

// Node 22.1+ keeps V8's compiled code of the modules on disk and reuses it while a file's bytes
// are unchanged: a start compiles ~600 modules (README, "Benchmarks": start to "ok"). Node 20 has
// no such cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Enabled before the import, which is
// dynamic for that reason: the static graph would load first.
// The folder is the owner's own (NODE_COMPILE_CACHE, else $XDG_CACHE_HOME or ~/.cache, then
// hearth/node-compile-cache), never Node's default under the shared /tmp: compiled code is run as
// it is found, so a folder another user made or can write is not used at all.
function compileCacheFolder () {
  const dir = process.env.NODE_COMPILE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hearth', 'node-compile-cache')
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const found = lstatSync(dir)
    const mine = process.getuid === undefined || found.uid === process.getuid()
    return found.isDirectory() && mine && (found.mode & 0o022) === 0 ? dir : null
  } catch {
    return null // not writable here (a read-only home): the modules are compiled as without a cache
  }
}
const folder = module.enableCompileCache === undefined ? null : compileCacheFolder()
const compileCache = folder === null ? undefined : module.enableCompileCache(folder)
// worker threads (the file writer, encryption) and import jobs inherit it through the environment
if (compileCache?.directory !== undefined) process.env.NODE_COMPILE_CACHE = compileCache.directory
await import('../dist/cli/entry.js')
