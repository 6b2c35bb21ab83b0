// The configuration over the API: what the running daemon uses and where each value came from,
// and validated, persisted edits (the dashboard's settings page and `hearth config set` share
// src/config/persist.ts). Keys marked live in the schema are applied at once; the rest at the next start.
import { HearthError } from '../../errors.js'
import type { Logger } from '../../log.js'
import type { HearthConfig } from '../../config/types.js'
import type { ConfigSource, ConfigSources } from '../../config/resolve.js'
import { persistConfigChange } from '../../config/persist.js'
import { CONFIG_SCHEMA, keySchema } from '../../config/schema.js'
import { ok } from '../http.js'
import type { Router } from '../router.js'

export interface ConfigRouteDeps {
  configFile: string
  /** The configuration the daemon started with, and the source of each value. */
  running: { config: HearthConfig, sources: Record<string, ConfigSource> }
  /** The environment and flags the daemon started with: they still override the file. */
  ambient: Omit<ConfigSources, 'file'>
  logger: Logger
}

/** The configuration with anything secret-looking removed (header values may carry credentials). */
export function publicConfig (config: HearthConfig): HearthConfig {
  const copy = structuredClone(config)
  copy.storage.kubo.headers = Object.fromEntries(Object.keys(copy.storage.kubo.headers).map((k) => [k, '[redacted]']))
  return copy
}

function readChange (body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HearthError('INVALID_BODY', 'expected {"set": {"path": value}, "unset": ["path"]}')
  const { set, unset, ...rest } = body as Record<string, unknown>
  if (Object.keys(rest).length > 0) throw new HearthError('INVALID_BODY', `unknown field(s): ${Object.keys(rest).join(', ')}`)
  const change: Record<string, unknown> = {}
  if (set !== undefined) {
    if (typeof set !== 'object' || set === null || Array.isArray(set)) throw new HearthError('INVALID_BODY', '"set" must be an object of key paths to values')
    Object.assign(change, set)
  }
  if (unset !== undefined) {
    if (!Array.isArray(unset) || unset.some((k) => typeof k !== 'string')) throw new HearthError('INVALID_BODY', '"unset" must be an array of key paths')
    for (const k of unset as string[]) change[k] = undefined
  }
  return change
}

export function addConfigRoutes (router: Router, deps: ConfigRouteDeps): void {
  const running = deps.running
  router.get('/v1/config', async () => ok({
    configFile: deps.configFile,
    config: publicConfig(running.config),
    sources: running.sources,
    schema: CONFIG_SCHEMA
  }))

  router.patch('/v1/config', async (req) => {
    const change = readChange(await req.json())
    const result = await persistConfigChange(deps.configFile, { set: change }, deps.ambient)
    for (const path of result.live) {
      if (path === 'logLevel' && result.overridden[path] === undefined) {
        deps.logger.level = result.next.config.logLevel
        running.config.logLevel = result.next.config.logLevel
        running.sources.logLevel = change.logLevel === undefined ? 'default' : 'file'
      }
    }
    return ok({
      saved: Object.keys(change),
      next: publicConfig(result.next.config),
      applied: result.live.filter((k) => keySchema(k)?.['x-live'] === true && result.overridden[k] === undefined),
      restartRequired: result.restartRequired,
      overridden: result.overridden
    })
  })
}
