// @ts-check
// A ChatGPT conversation is a tree (`mapping`: node id → {message, parent, children}): editing a
// prompt or regenerating an answer forks it, and `current_node` is the leaf the user last saw.
// The whole tree is kept; this module walks it once, without recursion (real conversations run
// to thousands of messages in a chain) and without looping on a damaged export's cycles.

import { isObject } from '../_shared/read.js'

/**
 * @typedef {Record<string, unknown>} Node
 * @typedef {{id: string, node: Node, via: string | undefined}} Visit  `via`: the node it was reached from
 */

/** @param {Record<string, unknown>} mapping */
function nodeLookup (mapping) {
  /** @param {unknown} id @returns {Node | undefined} */
  return (id) => typeof id === 'string' && Object.hasOwn(mapping, id) && isObject(mapping[id]) ? /** @type {Node} */ (mapping[id]) : undefined
}

/**
 * Every node once, each after the node it hangs under (depth first, children in the export's
 * order, which is the order they were written). The walk starts at the nodes without a parent;
 * a node still unvisited after that (a cycle in a damaged export) starts a walk of its own.
 * @param {Record<string, unknown>} mapping
 * @returns {Visit[]}
 */
export function walkTree (mapping) {
  const node = nodeLookup(mapping)
  const ids = Object.keys(mapping).filter((id) => node(id) !== undefined)
  const roots = ids.filter((id) => node(node(id)?.parent) === undefined)
  /** @type {Visit[]} */
  const order = []
  const visited = new Set()
  for (const start of [...roots, ...ids]) {
    /** @type {Array<[string, string | undefined]>} */
    const stack = [[start, undefined]]
    while (stack.length > 0) {
      const [id, via] = /** @type {[string, string | undefined]} */ (stack.pop())
      if (visited.has(id)) continue
      visited.add(id)
      const n = /** @type {Node} */ (node(id))
      order.push({ id, node: n, via })
      const children = Array.isArray(n.children) ? n.children.filter((c) => typeof c === 'string' && node(c) !== undefined && !visited.has(c)) : []
      for (let i = children.length - 1; i >= 0; i--) stack.push([/** @type {string} */ (children[i]), id])
    }
  }
  return order
}

/**
 * The leaf the user last saw: `current_node` when it names a node, else the branch that always
 * takes the newest child (the last regeneration).
 * @param {Record<string, unknown>} mapping
 * @param {unknown} currentNode
 * @returns {string | undefined}
 */
export function currentLeaf (mapping, currentNode) {
  const node = nodeLookup(mapping)
  if (node(currentNode) !== undefined) return /** @type {string} */ (currentNode)
  let id = Object.keys(mapping).find((k) => node(k) !== undefined && node(node(k)?.parent) === undefined)
  const visited = new Set()
  while (id !== undefined && !visited.has(id)) {
    visited.add(id)
    const children = node(id)?.children
    const next = Array.isArray(children) ? children.filter((c) => node(c) !== undefined).at(-1) : undefined
    if (next === undefined) break
    id = next
  }
  return id
}

/**
 * The messages of a conversation, tree order, each with the id of the nearest kept message above
 * it (`parent`), and the kept message that ends the current branch.
 * @template {{id: string}} M
 * @param {Record<string, unknown>} mapping
 * @param {unknown} currentNode
 * @param {(node: Node, nodeId: string) => M | null} toMessage null for a node whose message is not kept
 * @returns {{messages: Array<M & {parent?: string}>, currentMessage?: string}}
 */
export function keptTree (mapping, currentNode, toMessage) {
  /** @type {Map<string, string | undefined>} node id → the id of the nearest kept message at or above it */
  const keptAt = new Map()
  const ids = new Set()
  /** @type {Array<M & {parent?: string}>} */
  const messages = []
  for (const { id, node, via } of walkTree(mapping)) {
    const above = via === undefined ? undefined : keptAt.get(via)
    const m = toMessage(node, id)
    if (m === null || ids.has(m.id)) { keptAt.set(id, above); continue }
    ids.add(m.id)
    keptAt.set(id, m.id)
    messages.push(above === undefined ? m : { ...m, parent: above })
  }
  const leaf = currentLeaf(mapping, currentNode)
  const currentMessage = leaf === undefined ? undefined : keptAt.get(leaf)
  return currentMessage === undefined ? { messages } : { messages, currentMessage }
}

/**
 * The messages of the branch that ends at `last` (root first); every message when `last` is not
 * given (a version 1 conversation holds one branch and no parents).
 * @template {{id: string, parent?: string}} M
 * @param {M[]} messages @param {string | undefined} last
 * @returns {M[]}
 */
export function branchOf (messages, last) {
  if (last === undefined) return messages
  const byId = new Map(messages.map((m) => [m.id, m]))
  const branch = []
  const seen = new Set()
  for (let m = byId.get(last); m !== undefined && !seen.has(m.id); m = m.parent === undefined ? undefined : byId.get(m.parent)) {
    seen.add(m.id)
    branch.push(m)
  }
  return branch.reverse()
}
