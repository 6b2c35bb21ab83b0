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
import type { Connector, ConnectorModule, InstalledConnector, LoadedConnectors, PluginError, ScannedConnectors } from './types.js'

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

/**
 * Finds the plugins and validates their connector.json WITHOUT running their code: what the
 * daemon uses to answer GET /v1/connectors, so third-party plugin code never runs inside the
 * process that holds the owner's keys (imports run plugins in the CLI process instead).
 */
export async function scanConnectors (dirs: string | readonly string[], opts: { logger?: Logger } = {}): Promise<ScannedConnectors> {
  const logger = opts.logger ?? silentLogger()
  const connectors: InstalledConnector[] = []
  const errors: PluginError[] = []
  const loadedFrom = new Map<string, string>()
  for (const dir of typeof dirs === 'string' ? [dirs] : dirs) {
    for (const name of await pluginFolders(dir, logger)) {
      const pluginDir = join(resolve(dir), name)
      const earlier = loadedFrom.get(name)
      const result = earlier !== undefined
        ? pluginError(pluginDir, name, `a connector "${name}" is already loaded from ${earlier}`)
        : await inspectPlugin(pluginDir, name)
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

/** scanConnectors, then imports each plugin's module; a module that fails to load is reported too. */
export async function loadConnectors (dirs: string | readonly string[], opts: { logger?: Logger } = {}): Promise<LoadedConnectors> {
  const logger = opts.logger ?? silentLogger()
  const scanned = await scanConnectors(dirs, { logger })
  const connectors: Connector[] = []
  const errors = [...scanned.errors]
  for (const installed of scanned.connectors) {
    const result = await importPlugin(installed)
    if ('message' in result) {
      logger.warn({ plugin: installed.id, dir: installed.dir, err: result.message }, 'connector plugin not loaded')
      errors.push(result)
    } else connectors.push(result)
  }
  errors.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
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

function pluginError (dir: string, name: string, message: string): PluginError {
  return { id: name, code: 'PLUGIN_INVALID', message: `${dir}: ${message}` }
}

async function inspectPlugin (dir: string, name: string): Promise<InstalledConnector | PluginError> {
  let raw: unknown
  try {
    raw = JSON.parse(await readFile(join(dir, 'connector.json'), 'utf8'))
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    return pluginError(dir, name, e.code === 'ENOENT' ? 'no connector.json' : `connector.json is not valid JSON: ${e.message}`)
  }
  const checked = checkConnectorMetadata(raw, name)
  if (!checked.ok) return pluginError(dir, name, `connector.json: ${checked.problems.join('; ')}`)
  for (const file of ENTRY_FILES) {
    if ((await stat(join(dir, file)).catch(() => null))?.isFile() === true) {
      return { id: name, metadata: checked.metadata, dir, entry: file }
    }
  }
  return pluginError(dir, name, `no ${ENTRY_FILES.join(' / ')} next to connector.json`)
}

async function importPlugin (installed: InstalledConnector): Promise<Connector | PluginError> {
  const { id, dir, entry, metadata } = installed
  let mod: Record<string, unknown>
  try {
    mod = await import(pathToFileURL(join(dir, entry)).href) as Record<string, unknown>
  } catch (err) {
    const hint = entry.endsWith('.ts') ? ' (a .ts entry needs a TypeScript loader; ship index.js)' : ''
    return pluginError(dir, id, `${entry} failed to load${hint}: ${(err as Error).message}`)
  }
  const candidate = mod.default as Partial<ConnectorModule> | undefined
  if (candidate === null || typeof candidate !== 'object' || typeof candidate.read !== 'function') {
    return pluginError(dir, id, `${entry} must export default an object with a read(source, opts) function`)
  }
  return { id, metadata, dir, module: candidate as ConnectorModule }
}
