// Changes to config.json made by `hearth config set|unset` and the dashboard's settings page.
// A change is validated as the whole file it produces before the file is replaced (atomically,
// mode 0600), so a bad edit can never leave a config.json that stops the next start.
import { mkdir, open, rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { HearthError } from '../errors.js'
import { keySchema } from './schema.js'
import { getPath, isPlainObject, readConfigFile, resolveConfigWithSources, setPath, type ConfigSources, type ResolvedConfig } from './resolve.js'

export interface ConfigChange {
  /** key path → new value; `undefined` removes the key from the file (back to its default). */
  set: Record<string, unknown>
}

export interface PersistResult {
  /** What the daemon will run with at its next start (file, then the given env and flags). */
  next: ResolvedConfig
  /** Keys whose new value only takes effect at the next start. */
  restartRequired: string[]
  /** Keys a running daemon applies at once. */
  live: string[]
  /** Keys whose file value is hidden by an environment variable or flag. */
  overridden: Record<string, string>
}

function checkKnownKey (path: string): void {
  const parts = path.split('.')
  // free-form maps (storage.kubo.headers) take any key below them
  for (let i = parts.length; i > 0; i--) {
    const schema = keySchema(parts.slice(0, i).join('.'))
    if (schema === undefined) continue
    if (i === parts.length || (schema.properties === undefined && isPlainObject(schema.additionalProperties))) return
    break
  }
  throw new HearthError('CONFIG_INVALID', `${path} is not a configuration key`, { reasons: [`${path} is not a configuration key`] })
}

/** Parse `path=value` (value as JSON when it parses, else the text). */
export function parseAssignment (text: string): [string, unknown] {
  const eq = text.indexOf('=')
  if (eq <= 0) throw new HearthError('INVALID_ARGUMENT', `expected path=value, got ${JSON.stringify(text)}`)
  const raw = text.slice(eq + 1)
  let value: unknown
  try { value = JSON.parse(raw) } catch { value = raw }
  return [text.slice(0, eq), value]
}

async function writeAtomically (path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`
  const handle = await open(tmp, 'w', 0o600)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await rename(tmp, path)
  } catch (err) {
    await unlink(tmp).catch(() => {})
    throw err
  }
}

export async function persistConfigChange (configPath: string, change: ConfigChange, ambient: Omit<ConfigSources, 'file'> = {}): Promise<PersistResult> {
  const current = await readConfigFile(configPath)
  if (current !== undefined && !isPlainObject(current)) throw new HearthError('CONFIG_INVALID', `${configPath} must hold a JSON object`)
  const file = structuredClone(current ?? {}) as Record<string, unknown>
  const keys = Object.keys(change.set)
  if (keys.length === 0) throw new HearthError('INVALID_ARGUMENT', 'no configuration key to change')
  for (const [path, value] of Object.entries(change.set)) {
    checkKnownKey(path)
    setPath(file, path, value)
  }
  // the file alone must be valid (environment and flags come and go), and so must the next start
  resolveConfigWithSources({ file, changing: keys })
  const next = resolveConfigWithSources({ ...ambient, file })
  await writeAtomically(configPath, JSON.stringify(file, null, 2) + '\n')
  const overridden: Record<string, string> = {}
  for (const path of keys) {
    const source = next.sources[path]
    if (source !== undefined && source !== 'file' && source !== 'default' && getPath(file, path) !== undefined) overridden[path] = source
  }
  const live = keys.filter((k) => keySchema(k)?.['x-live'] === true)
  return { next, live, restartRequired: keys.filter((k) => !live.includes(k)), overridden }
}
