// The version of this Hearth build, read once from package.json (one level above both src/ and
// dist/, so the same code finds it when run from the sources and from the compiled build).
import { readFileSync } from 'node:fs'

function readVersion (): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    return typeof pkg.version === 'string' ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}

export const HEARTH_VERSION = readVersion()
