// Character image models (docs/protocol.md §4): training takes minutes and one SUCCESS model means
// personalised images can be made, so the owner wants to see when a model's status changes.
// Every models answer seen through the proxy is compared with the previous one; changes are
// recorded with a timestamp and shown by `hearth status`.
import type { ProxyKv } from './types.js'

export interface ModelChange {
  characterId: string
  modelId: string
  /** null when the model was first seen. */
  from: string | null
  to: string
  at: number
}

export interface CharacterModels {
  characterId: string
  checkedAt: number
  /** True when at least one model is SUCCESS. */
  ready: boolean
  models: Array<{ id: string, status: string }>
}

export interface ModelStatus {
  characters: CharacterModels[]
  /** Most recent first. */
  changes: ModelChange[]
}

export interface ModelTracker {
  observe (characterId: string, body: unknown, now?: number): Promise<ModelChange[]>
  status (limitChanges?: number): Promise<ModelStatus>
}

const STATE = 'models/state/'
const CHANGE = 'models/change/'

/** The models of an answer as {id, status}; ids fall back to name or position when absent. */
export function summariseModels (body: unknown): Array<{ id: string, status: string }> | null {
  const list = (body as { models?: unknown } | null)?.models
  if (!Array.isArray(list)) return null
  return list.map((m: unknown, i) => {
    const o = (m !== null && typeof m === 'object' ? m : {}) as Record<string, unknown>
    const id = typeof o.id === 'string' ? o.id : typeof o.name === 'string' ? o.name : `#${i}`
    return { id, status: typeof o.status === 'string' ? o.status : 'UNKNOWN' }
  })
}

export function createModelTracker (deps: { kv: ProxyKv }): ModelTracker {
  const { kv } = deps
  return {
    async observe (characterId, body, now = Date.now()) {
      const models = summariseModels(body)
      if (models === null) return []
      const previous = await kv.get(STATE + characterId) as CharacterModels | undefined
      const before = new Map((previous?.models ?? []).map((m) => [m.id, m.status]))
      const changes: ModelChange[] = []
      for (const m of models) {
        const was = before.get(m.id)
        if (was === m.status) continue
        // A model seen for the first time is a change too, except on the very first look at a character.
        if (was === undefined && previous === undefined) continue
        changes.push({ characterId, modelId: m.id, from: was ?? null, to: m.status, at: now })
      }
      for (const [i, c] of changes.entries()) {
        await kv.put(`${CHANGE}${String(now).padStart(15, '0')}-${i}-${characterId}`, c)
      }
      const state: CharacterModels = { characterId, checkedAt: now, ready: models.some((m) => m.status === 'SUCCESS'), models }
      await kv.put(STATE + characterId, state)
      return changes
    },

    async status (limitChanges = 20) {
      const characters: CharacterModels[] = []
      for await (const [, v] of kv.entries({ prefix: STATE })) characters.push(v as CharacterModels)
      const changes: ModelChange[] = []
      for await (const [, v] of kv.entries({ prefix: CHANGE })) changes.push(v as ModelChange)
      return { characters, changes: changes.reverse().slice(0, limitChanges) }
    }
  }
}
