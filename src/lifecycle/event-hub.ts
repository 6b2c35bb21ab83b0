// A small typed publish/subscribe hub. Parts announce what happened (a file stored, a scope
// deleted) without knowing who listens, so the composition root can create the hub first and
// connect parts in any order. Fan-out is synchronous, in subscription order; a listener that
// throws or rejects is logged and never reaches the emitter or the other listeners.
import type { Logger } from '../log.js'

export type EventListener<P> = (payload: P) => void | Promise<void>

export interface EventSource<E> {
  /** Subscribe; the returned function unsubscribes (idempotent). */
  on<K extends keyof E & string> (event: K, listener: EventListener<E[K]>): () => void
}

export interface EventSink<E> {
  emit<K extends keyof E & string> (event: K, payload: E[K]): void
}

export interface EventHub<E> extends EventSource<E>, EventSink<E> {
  /** Number of listeners of `event` (for status and tests). */
  listenerCount (event: keyof E & string): number
}

export function createEventHub<E> (logger: Logger): EventHub<E> {
  const listeners = new Map<string, Set<EventListener<never>>>()
  const failed = (event: string, err: unknown): void => {
    logger.error({ err, event }, 'event listener failed')
  }
  return {
    on (event, listener) {
      let set = listeners.get(event)
      if (set === undefined) { set = new Set(); listeners.set(event, set) }
      // wrapped, so the same function subscribed twice is two subscriptions with their own off()
      const entry: EventListener<never> = (payload) => listener(payload)
      set.add(entry)
      return () => { set.delete(entry) }
    },
    emit (event, payload) {
      const set = listeners.get(event)
      if (set === undefined) return
      // a copy: a listener that subscribes or unsubscribes does not change this round
      for (const listener of [...set] as Array<EventListener<typeof payload>>) {
        try {
          const result = listener(payload)
          if (result instanceof Promise) result.catch((err: unknown) => { failed(event, err) })
        } catch (err) {
          failed(event, err)
        }
      }
    },
    listenerCount (event) {
      return listeners.get(event)?.size ?? 0
    }
  }
}
