// The node flags a checkout's launcher (bin/hearth.js, its `#!/usr/bin/env -S node …` line) gives
// the daemon: benches that start `dist/cli/entry.js` or the sources directly pass the same ones,
// so each variant runs as `hearth daemon` runs it. An older launcher without flags gives none.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export function launcherFlags (checkout: string): string[] {
  const first = readFileSync(join(checkout, 'bin/hearth.js'), 'utf8').split('\n')[0] ?? ''
  const m = /^#!\/usr\/bin\/env -S node((?: --\S+)*)\s*$/.exec(first)
  return m === null ? [] : m[1]!.trim().split(/\s+/).filter((f) => f !== '')
}
