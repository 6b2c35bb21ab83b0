// The layout of a Hearth home folder (HEARTH_HOME, default ~/.hearth). Every component receives
// the paths it needs from here through its dependency object; nothing else builds home paths.
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

export interface HomeLayout {
  root: string
  data: string            // data/{scope}/{collectedAt}.json, the owner's files
  identity: string        // identity/ (mode 0700): master signature, tx key, tokens
  index: string           // index/: classic-level database of files, schemas and queues
  blocks: string          // ipfs/blocks: the embedded IPFS node's blockstore
  datastore: string       // ipfs/datastore: the embedded IPFS node's datastore
  run: string             // run/: socket, lock, pid
  socket: string          // run/hearth.sock
  lock: string            // run/daemon.lock
  images: string          // images/<jobId>/ downloaded image outputs
  config: string          // config.json
  schemas: string         // schemas/: definitions pinned locally (copies, for audit)
  search: string          // search/: the full-text index of the stored versions (search.db, rebuilt when lost)
}

export function defaultHomeRoot (env: NodeJS.ProcessEnv = process.env): string {
  // an empty HEARTH_HOME (`Environment=HEARTH_HOME=` in a unit, `HEARTH_HOME= hearth …`) means
  // unset, never "the current folder"
  const given = env.HEARTH_HOME
  return resolve(given !== undefined && given !== '' ? given : join(homedir(), '.hearth'))
}

export function homeLayout (root: string): HomeLayout {
  const r = resolve(root)
  return {
    root: r,
    data: join(r, 'data'),
    identity: join(r, 'identity'),
    index: join(r, 'index'),
    blocks: join(r, 'ipfs', 'blocks'),
    datastore: join(r, 'ipfs', 'datastore'),
    run: join(r, 'run'),
    socket: join(r, 'run', 'hearth.sock'),
    lock: join(r, 'run', 'daemon.lock'),
    images: join(r, 'images'),
    config: join(r, 'config.json'),
    schemas: join(r, 'schemas'),
    search: join(r, 'search')
  }
}
