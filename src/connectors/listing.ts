// The installed connectors and their scopes, with the labels a consent screen shows: the body of
// `GET /v1/connectors` and of `hearth connectors --json`.
import type { ConnectorMetadata, ConnectorScope, PluginError } from './types.js'

export interface ConnectorsBody {
  connectors: Array<{ connectorId: string; displayName: string; version: string; scopes: ConnectorScope[] }>
  errors: PluginError[]
}

/** The body of `GET /v1/connectors` and of `hearth connectors --json`. */
export function listConnectorsBody (found: { connectors: ReadonlyArray<{ metadata: ConnectorMetadata }>; errors: readonly PluginError[] }): ConnectorsBody {
  return {
    connectors: found.connectors.map(({ metadata: m }) => ({
      connectorId: m.connectorId,
      displayName: m.displayName,
      version: m.version,
      scopes: m.scopes.map((s) => ({ scope: s.scope, label: s.label, description: s.description, ...(s.optional === true ? { optional: true } : {}) }))
    })),
    errors: found.errors.map((e) => ({ id: e.id, code: e.code, message: e.message }))
  }
}
