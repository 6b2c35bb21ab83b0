// Validation of `connector.json` (docs/protocol.md §2.7). Pure: takes the parsed JSON, returns the metadata
// or every problem found, worded for the plugin's author.
import { scopeProblem } from '../protocol/scope.js'
import type { ConnectorMetadata } from './types.js'

export const CONNECTOR_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/

export type MetadataCheck = { ok: true; metadata: ConnectorMetadata } | { ok: false; problems: string[] }

/**
 * `folderName` is the plugin folder's name: the connectorId must equal it, so `hearth import <id>`
 * and the folder a user sees never disagree. Unknown extra fields are allowed (newer metadata).
 */
export function checkConnectorMetadata (raw: unknown, folderName: string): MetadataCheck {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, problems: ['connector.json must hold a JSON object'] }
  const m = raw as Record<string, unknown>
  const problems: string[] = []
  const text = (key: string): string | undefined => {
    const v = m[key]
    if (typeof v !== 'string' || v.trim() === '') { problems.push(`${key} must be a non-empty string`); return undefined }
    return v
  }
  const connectorId = text('connectorId')
  if (connectorId !== undefined) {
    if (!CONNECTOR_ID_PATTERN.test(connectorId)) problems.push(`connectorId ${JSON.stringify(connectorId)} must match ${CONNECTOR_ID_PATTERN.source}`)
    else if (connectorId !== folderName) problems.push(`connectorId ${JSON.stringify(connectorId)} must equal the plugin folder's name ${JSON.stringify(folderName)}`)
  }
  const displayName = text('displayName')
  const version = text('version')
  const scopes: ConnectorMetadata['scopes'] = []
  if (!Array.isArray(m.scopes) || m.scopes.length === 0) problems.push('scopes must be a non-empty array')
  else {
    const seen = new Set<string>()
    m.scopes.forEach((s: unknown, i: number) => {
      const at = `scopes[${i}]`
      if (s === null || typeof s !== 'object' || Array.isArray(s)) { problems.push(`${at} must be an object`); return }
      const { scope, label, description, optional } = s as Record<string, unknown>
      const bad = scopeProblem(scope)
      if (bad !== null) problems.push(`${at}.scope ${typeof scope === 'string' ? JSON.stringify(scope) + ' ' : ''}${bad}`)
      else if (seen.has(scope as string)) problems.push(`${at}.scope ${JSON.stringify(scope)} is listed twice`)
      if (typeof label !== 'string' || label.trim() === '') problems.push(`${at}.label must be a non-empty string`)
      if (typeof description !== 'string') problems.push(`${at}.description must be a string`)
      if (optional !== undefined && typeof optional !== 'boolean') problems.push(`${at}.optional must be true or false`)
      if (bad === null && typeof label === 'string' && typeof description === 'string') {
        seen.add(scope as string)
        scopes.push({ scope: scope as string, label, description, ...(optional === true ? { optional } : {}) })
      }
    })
  }
  if (problems.length > 0) return { ok: false, problems }
  return { ok: true, metadata: { connectorId: connectorId!, displayName: displayName!, version: version!, scopes } }
}
