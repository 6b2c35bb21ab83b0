// The project's own code files under a folder, for tests that read the sources themselves.
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Paths of the .ts, .js and .mjs files under `dir`, node_modules left out. */
export function codeFiles (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (name === 'node_modules') return []
    return statSync(p).isDirectory() ? codeFiles(p) : (/\.(ts|js|mjs)$/.test(name) ? [p] : [])
  })
}
