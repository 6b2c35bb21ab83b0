// What a checkout's launcher (bin/hearth.js, its `#!/usr/bin/env -S [VAR=value …] node [flags]`
// line) gives the daemon: benches that start `dist/cli/entry.js` or the sources directly pass the
// same node flags and environment, so each variant runs as `hearth daemon` runs it. An older
// launcher without them gives none.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Launcher { flags: string[]; env: Record<string, string> }

export function launcherSettings (checkout: string): Launcher {
  const first = readFileSync(join(checkout, 'bin/hearth.js'), 'utf8').split('\n')[0] ?? ''
  const m = /^#!\/usr\/bin\/env -S ((?:\w+=\S+ )*)node((?: --\S+)*)\s*$/.exec(first)
  if (m === null) return { flags: [], env: {} }
  const env = Object.fromEntries(m[1]!.trim().split(/\s+/).filter((a) => a !== '').map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]))
  return { flags: m[2]!.trim().split(/\s+/).filter((f) => f !== ''), env }
}
