// Preloaded into a daemon (NODE_OPTIONS=--require=<this>, HEARTH_BENCH_LEVEL_OPS=<file>) by
// bench/level-ops.ts: counts the calls into every classic-level database of the process (the
// index and the embedded node's pins and small blocks), by database folder and method, with the
// keys they read and the operations their batches write; on SIGUSR2 writes the counts so far.
'use strict'
const { renameSync, writeFileSync } = require('node:fs')
const { basename } = require('node:path')
const out = process.env.HEARTH_BENCH_LEVEL_OPS
const counts = {}
const bump = (db, what, by = 1) => {
  const c = counts[db] ??= {}
  c[what] = (c[what] ?? 0) + by
}
// `!files!!rec!path` → files/rec (a sublevel), `/pinned-block/…` → /pinned-block/ (Helia's keys)
const namespace = (key) => {
  const k = typeof key === 'string' ? key : Buffer.from(key).toString('latin1')
  const sub = /^((?:![^!]*!)+)/.exec(k)
  if (sub !== null) return sub[1].split('!').filter((x) => x !== '').join('/')
  const helia = /^(\/[^/]*\/)/.exec(k)
  return helia !== null ? helia[1] : '?'
}
const byNamespace = process.env.HEARTH_BENCH_LEVEL_OPS_BY_NAMESPACE === '1'
// HEARTH_BENCH_LEVEL_OPS_STACKS=1: each namespace's reads and writes also by the daemon's own
// functions that made them (the first three frames of its dist/ on the stack)
const byStack = process.env.HEARTH_BENCH_LEVEL_OPS_STACKS === '1'
const caller = () => {
  const frames = (new Error().stack ?? '').split('\n').filter((l) => l.includes('/dist/') && !l.includes('/node_modules/'))
  return frames.slice(0, 3).map((l) => l.trim().replace(/^at /, '').replace(/\(?file:\/\/\S*\/dist\//, '').replace(/:\d+\)?$/, '')).join(' < ')
}
const perKey = (db, what, keys) => {
  if (!byNamespace) return
  const from = byStack ? ` ← ${caller()}` : ''
  for (const k of keys) bump(db, `${what} ${namespace(k)}${from}`)
}
const patch = (proto) => {
  const wrap = (name, count) => {
    const original = proto[name]
    if (typeof original !== 'function' || original.__counted === true) return
    const counted = function (...args) {
      const db = basename(this.location ?? '?')
      // every call is one job on libuv's thread pool (a wake-up there and one back), but an iterator's pages come on later calls
      bump(db, 'calls (all)')
      count(db, args)
      return original.apply(this, args)
    }
    counted.__counted = true
    proto[name] = counted
  }
  wrap('_get', (db, [key]) => { bump(db, 'get calls'); bump(db, 'keys read'); perKey(db, 'read', [key]) })
  wrap('_getMany', (db, [keys]) => { bump(db, 'getMany calls'); bump(db, 'keys read', keys.length); perKey(db, 'read', keys) })
  wrap('_has', (db) => { bump(db, 'has calls'); bump(db, 'keys read') })
  wrap('_hasMany', (db, [keys]) => { bump(db, 'hasMany calls'); bump(db, 'keys read', keys.length) })
  wrap('_put', (db, [key, , options]) => { bump(db, 'put calls'); perKey(db, 'write', [key]); bump(db, 'ops written'); if (options?.sync === true) bump(db, 'synced writes') })
  wrap('_del', (db, [key, options]) => { bump(db, 'del calls'); perKey(db, 'write', [key]); bump(db, 'ops written'); if (options?.sync === true) bump(db, 'synced writes') })
  wrap('_batch', (db, [ops, options]) => {
    bump(db, 'batch calls'); bump(db, 'ops written', ops.length)
    let bytes = 0
    for (const op of ops) bytes += (op.key?.length ?? 0) + (op.value?.length ?? 0)
    perKey(db, 'write', ops.map((op) => op.key))
    bump(db, 'bytes written', bytes)
    if (options?.sync === true) bump(db, 'synced writes')
  })
  wrap('_iterator', (db, [options]) => { bump(db, 'iterators'); perKey(db, 'iterate', [options?.gt ?? options?.gte ?? options?.lt ?? options?.lte ?? '']) })
}
try {
  // the daemon's own copy (its checkout is its working folder), not this checkout's
  patch(require(require.resolve('classic-level', { paths: [process.cwd()] })).ClassicLevel.prototype)
} catch (err) {
  process.stderr.write(`level-ops: classic-level not patched: ${err.message}\n`)
}
// written beside and renamed into place: the bench reads the file as soon as it exists, never half of it
process.on('SIGUSR2', () => {
  if (out === undefined) return
  writeFileSync(`${out}.tmp`, JSON.stringify(counts))
  renameSync(`${out}.tmp`, out)
})
