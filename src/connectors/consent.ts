// What the owner is asked to consent to: for each scope pattern of a request, the label and
// description of the connectors' metadata (docs/protocol.md §2.7). Pure: given the installed
// connectors' metadata.
import type { ConnectorMetadata } from './types.js'

export interface ConsentItem {
  pattern: string
  label: string
  description: string
  /** The connector(s) whose scopes the pattern covers; empty when none is installed. */
  connectors: string[]
}

export function consentFor (patterns: readonly string[], connectors: readonly ConnectorMetadata[]): ConsentItem[] {
  return patterns.map((pattern) => {
    if (pattern === '*') {
      return { pattern, label: 'All of your data', description: 'Every scope, including ones added later', connectors: connectors.map((c) => c.connectorId) }
    }
    if (pattern.endsWith('.*')) {
      const source = pattern.slice(0, -2)
      const matching = connectors.filter((c) => c.scopes.some((s) => s.scope.startsWith(`${source}.`)))
      const labels = matching.flatMap((c) => c.scopes.filter((s) => s.scope.startsWith(`${source}.`)).map((s) => s.label))
      const name = matching[0]?.displayName ?? source
      return {
        pattern,
        label: `All of your ${name} data`,
        description: labels.length > 0 ? `${labels.join('; ')} (and any ${source} scope added later)` : `Every ${source} scope (no installed connector describes them)`,
        connectors: matching.map((c) => c.connectorId)
      }
    }
    for (const c of connectors) {
      const s = c.scopes.find((x) => x.scope === pattern)
      if (s !== undefined) return { pattern, label: s.label, description: s.description, connectors: [c.connectorId] }
    }
    return { pattern, label: pattern, description: 'No installed connector describes this scope', connectors: [] }
  })
}
