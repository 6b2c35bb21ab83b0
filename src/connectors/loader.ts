// Finds and loads connector plugins. Each plugin is a folder with connector.json and index.js
// (plain ESM JavaScript, so a plugin needs no build step and runs the same under tsx and from the
// compiled CLI). A broken plugin is reported with PLUGIN_INVALID and skipped; it never throws
// and never stops the others from loading.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { HomeLayout } from '../home.js'
import { silentLogger, type Logger } from '../log.js'
import { checkConnectorMetadata } from './metadata.js'
import type { Connector, ConnectorModule, LoadedConnectors, PluginError } from './types.js'

/** Entry files tried in order. index.ts only loads when a TypeScript loader (tsx) is active. */
const ENTRY_FILES = ['index.js', 'index.mjs', 'index.ts']

/** The connectors shipped with Hearth: `<install>/plugins` (same depth from src/ and dist/). */
export function shippedPluginsDir (): string {
  return fileURLToPath(new URL('../../plugins', import.meta.url))
}

/** Where connectors are looked for: the shipped ones, then the owner's own in `<home>/plugins`. */
export function connectorDirs (home: Pick<HomeLayout, 'root'>): string[] {
  return [shippedPluginsDir(), join(home.root, 'plugins')]
}

export async function loadConnectors (dirs: string | readonly string[], opts: { logger?: Logger } = {}): Promise<LoadedConnectors> {
  const logger = opts.logger ?? silentLogger()
  const connectors: Connector[] = []
  const errors: PluginError[] = []
  const loadedFrom = new Map<string, string>()
  for (const dir of typeof dirs === 'string' ? [dirs] : dirs) {
    for (const name of await pluginFolders(dir, logger)) {
      const pluginDir = join(resolve(dir), name)
      const earlier = loadedFrom.get(name)
      if (earlier !== undefined) {
        errors.push({ id: name, code: 'PLUGIN_INVALID', message: `${pluginDir}: a connector "${name}" is already loaded from ${earlier}` })
        continue
      }
      const result = await loadPlugin(pluginDir, name)
      if ('message' in result) {
        logger.warn({ plugin: name, dir: pluginDir, err: result.message }, 'connector plugin not loaded')
        errors.push(result)
      } else {
        loadedFrom.set(name, pluginDir)
        connectors.push(result)
      }
    }
  }
  connectors.sort((a, b) => a.id < b.id ? -1 : 1)
  return { connectors, errors }
}

export function findConnector (loaded: LoadedConnectors, id: string): Connector | undefined {
  return loaded.connectors.find((c) => c.id === id)
}

async function pluginFolders (dir: string, logger: Logger): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    // No plugins folder simply means no plugins there (the owner's <home>/plugins is optional).
    logger.debug({ dir, err: (err as Error).message }, 'no connector folder')
    return []
  }
  const folders: string[] = []
  for (const name of names.sort()) {
    // Folders named .x or _x are helpers or disabled plugins, node_modules is a plugin's dependencies.
    if (name.startsWith('.') || name.startsWith('_') || name === 'node_modules') continue
    const s = await stat(join(dir, name)).catch(() => null)
    if (s?.isDirectory() === true) folders.push(name)
  }
  return folders
}

async function loadPlugin (dir: string, name: string): Promise<Connector | PluginError> {
  const fail = (message: string): PluginError => ({ id: name, code: 'PLUGIN_INVALID', message: `${dir}: ${message}` })
  let raw: unknown
  try {
    raw = JSON.parse(await readFile(join(dir, 'connector.json'), 'utf8'))
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    return fail(e.code === 'ENOENT' ? 'no connector.json' : `connector.json is not valid JSON: ${e.message}`)
  }
  const checked = checkConnectorMetadata(raw, name)
  if (!checked.ok) return fail(`connector.json: ${checked.problems.join('; ')}`)

  let entry: string | undefined
  for (const file of ENTRY_FILES) {
    if ((await stat(join(dir, file)).catch(() => null))?.isFile() === true) { entry = file; break }
  }
  if (entry === undefined) return fail(`no ${ENTRY_FILES.join(' / ')} next to connector.json`)
  let mod: Record<string, unknown>
  try {
    mod = await import(pathToFileURL(join(dir, entry)).href) as Record<string, unknown>
  } catch (err) {
    const hint = entry.endsWith('.ts') ? ' (a .ts entry needs a TypeScript loader; ship index.js)' : ''
    return fail(`${entry} failed to load${hint}: ${(err as Error).message}`)
  }
  const candidate = mod.default as Partial<ConnectorModule> | undefined
  if (candidate === null || typeof candidate !== 'object' || typeof candidate.read !== 'function') {
    return fail(`${entry} must export default an object with a read(source, opts) function`)
  }
  return { id: name, metadata: checked.metadata, dir, module: candidate as ConnectorModule }
}
