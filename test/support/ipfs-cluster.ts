// A real IPFS Cluster on loopback for tests and the bench: N `ipfs-cluster-service` peers (built by
// scripts/install-ipfs-cluster.sh), each with its own real Kubo (ipfs-daemon.ts), sharing one
// cluster secret, CRDT consensus, replication everywhere (factor -1), no mDNS, no relay; every
// listener on 127.0.0.1. Each peer serves the IPFS Pinning Service API (`pinsvcapi`); a bearer
// token for it is made with `POST /token` and basic auth, as the cluster's docs describe.
//
// The peers' Kubo gateways have `Gateway.NoFetch`: they answer only from their own blocks, so a
// read through them proves the cluster holds the content (not that it could find it elsewhere).
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { readFile, writeFile, chmod, appendFile, mkdir } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TestContext } from 'node:test'
import { tempDir } from './tmp.js'
import { installedTool, killGroup, sleep } from './go-tools.js'
import { freeLoopbackPort, startIpfsDaemon, type IpfsDaemon } from './ipfs-daemon.js'

const START_TIMEOUT_MS = 90_000
const USER = 'hearth'

export interface ClusterPeer {
  index: number
  peerId: string
  /** The peer's Pinning Service API base URL (`{url}/pins`). */
  pinsvcUrl: string
  /** Its REST API base URL. */
  restUrl: string
  kubo: IpfsDaemon
  /** Pid of the running peer (changes on restart). */
  readonly pid: number
  readonly running: boolean
  stop (opts?: { kill?: boolean }): Promise<void>
  start (): Promise<void>
}

export interface IpfsCluster {
  peers: ClusterPeer[]
  /** The basic-auth password the token was made with. */
  password: string
  /** A fresh bearer token for the Pinning Service API of `peer` (POST /token). */
  token (peer?: ClusterPeer): Promise<string>
  /** Writes a token to a new file of mode 0600 in `dir`; resolves to its path. */
  tokenFile (dir: string, peer?: ClusterPeer): Promise<string>
}

type After = Pick<TestContext, 'after'>

/** Builds ipfs-cluster-service if it is not there yet; resolves to the binary. */
export async function ensureClusterInstalled (): Promise<string> { return await installedTool('install-ipfs-cluster.sh') }

export async function startIpfsCluster (t: After, size = 3): Promise<IpfsCluster> {
  const bin = await ensureClusterInstalled()
  const secret = randomBytes(32).toString('hex')
  const password = randomBytes(12).toString('hex')
  const peers: PeerInternal[] = []
  for (let i = 0; i < size; i++) {
    const kubo = await startIpfsDaemon(t, { gatewayNoFetch: true })
    const bootstrap = peers.length === 0 ? [] : [peers[0]]
    peers.push(await startPeer(t, bin, i, kubo, { secret, password, bootstrap: bootstrap.map((p) => p.clusterAddr) }))
  }
  const basic = `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`
  await waitForPeers(peers[0], size, basic)
  const token = async (peer: ClusterPeer = peers[0]): Promise<string> => {
    const res = await fetch(`${peer.restUrl}/token`, { method: 'POST', headers: { authorization: basic } })
    if (!res.ok) throw new Error(`POST /token answered ${res.status}: ${await res.text()}`)
    return (await res.json() as { token: string }).token
  }
  return {
    peers,
    password,
    token,
    tokenFile: async (dir, peer) => {
      const path = join(dir, `pinning-token-${randomBytes(4).toString('hex')}`)
      await writeFile(path, await token(peer), { mode: 0o600 })
      await chmod(path, 0o600)
      return path
    }
  }
}

interface PeerInternal extends ClusterPeer { clusterAddr: string }

async function startPeer (t: After, bin: string, index: number, kubo: IpfsDaemon,
  opts: { secret: string; password: string; bootstrap: string[] }): Promise<PeerInternal> {
  const dir = await tempDir(t, 'hearth-cluster-')
  const env = { PATH: process.env.PATH, HOME: dir, IPFS_CLUSTER_PATH: dir, ...(process.env.IPFS_CLUSTER_LOG_LEVEL !== undefined ? { IPFS_CLUSTER_LOG_LEVEL: process.env.IPFS_CLUSTER_LOG_LEVEL } : {}) }
  await promisify(execFile)(bin, ['init', '--consensus', 'crdt', '--datastore', 'leveldb'], { env, timeout: 60_000 })
  const [swarmPort, restPort, pinsvcPort] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()]
  const configPath = join(dir, 'service.json')
  const config = JSON.parse(await readFile(configPath, 'utf8'))
  config.cluster.peername = `hearth-test-${index}`
  config.cluster.secret = opts.secret
  config.cluster.listen_multiaddress = [`/ip4/127.0.0.1/tcp/${swarmPort}`]
  config.cluster.enable_relay_hop = false
  config.cluster.mdns_interval = '0s'
  config.cluster.replication_factor_min = -1
  config.cluster.replication_factor_max = -1
  config.cluster.monitor_ping_interval = '2s'
  config.cluster.peer_watch_interval = '2s'
  const credentials = { [USER]: opts.password }
  config.api.restapi.http_listen_multiaddress = `/ip4/127.0.0.1/tcp/${restPort}`
  config.api.restapi.basic_auth_credentials = credentials
  config.api.pinsvcapi.http_listen_multiaddress = `/ip4/127.0.0.1/tcp/${pinsvcPort}`
  config.api.pinsvcapi.basic_auth_credentials = credentials
  config.api.ipfsproxy.listen_multiaddress = '/ip4/127.0.0.1/tcp/0' // unused here: any free port
  const kuboApi = `/ip4/127.0.0.1/tcp/${new URL(kubo.apiUrl).port}`
  config.api.ipfsproxy.node_multiaddress = kuboApi
  config.ipfs_connector.ipfshttp.node_multiaddress = kuboApi
  if (config.informer?.tags !== undefined) config.informer.tags.metric_ttl = '5s'
  // With the default 10 pins at a time per peer the pinning falls behind a burst (README, "IPFS
  // Cluster of your own"). CRDT batching (consensus.crdt.batching) would lift the cluster's ~30
  // pin requests/s, but it put a replace's Pin and Unpin of the same CID into one batch, and live
  // peers then dropped pins the cluster still called pinned (the faults test, 2 runs in 5).
  config.pin_tracker.stateless.concurrent_pins = 50
  // A peer retries its failed or unexpectedly missing pins every pin_recover_interval (12 min by
  // default, which a test cannot wait): the faults test kills a peer and the daemon mid-batch, and
  // once (Node 24) a live peer still lacked pins a minute after the cluster said "pinned".
  config.cluster.pin_recover_interval = '10s'
  await writeFile(configPath, JSON.stringify(config, null, 2))
  const identity = JSON.parse(await readFile(join(dir, 'identity.json'), 'utf8')) as { id: string }

  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let log = ''
  // HEARTH_TEST_LOG_DIR keeps every peer's whole log (at IPFS_CLUSTER_LOG_LEVEL) for a failing run
  const keepDir = process.env.HEARTH_TEST_LOG_DIR
  const keptLog = keepDir === undefined || keepDir === '' ? null : join(keepDir, `cluster-${opts.secret.slice(0, 8)}-peer${index}.log`)
  if (keptLog !== null) await mkdir(keepDir!, { recursive: true })
  const start = async (): Promise<void> => {
    log = ''
    if (keptLog !== null) await appendFile(keptLog, `--- daemon start ${new Date().toISOString()}\n`)
    const args = ['daemon', ...(opts.bootstrap.length > 0 ? ['--bootstrap', opts.bootstrap.join(',')] : [])]
    const proc = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    child = proc
    exited = new Promise((resolve) => { proc.once('exit', () => { resolve() }) })
    const collect = (b: Buffer): void => {
      log = (log + b.toString()).slice(-16000)
      if (keptLog !== null) void appendFile(keptLog, b).catch(() => {})
    }
    proc.stdout!.on('data', collect)
    proc.stderr!.on('data', collect)
    const deadline = Date.now() + START_TIMEOUT_MS
    while (!/IPFS Cluster is READY/.test(log)) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`cluster peer ${index} exited during start:\n${log}`)
      if (Date.now() > deadline) { killGroup(proc, 'SIGKILL'); throw new Error(`cluster peer ${index} not ready after ${START_TIMEOUT_MS} ms:\n${log}`) }
      await sleep(100)
    }
  }
  const stop = async (o: { kill?: boolean } = {}): Promise<void> => {
    const proc = child
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return
    killGroup(proc, o.kill === true ? 'SIGKILL' : 'SIGTERM')
    const timer = setTimeout(() => { killGroup(proc, 'SIGKILL') }, 15_000)
    await exited
    clearTimeout(timer)
  }
  const onExit = (): void => { if (child !== undefined) killGroup(child, 'SIGKILL') }
  process.once('exit', onExit)
  // registered after the Kubo's own t.after, so it runs first (after hooks run in reverse)
  t.after(async () => { await stop({ kill: true }); process.removeListener('exit', onExit) })
  await start()
  return {
    index,
    peerId: identity.id,
    clusterAddr: `/ip4/127.0.0.1/tcp/${swarmPort}/p2p/${identity.id}`,
    pinsvcUrl: `http://127.0.0.1:${pinsvcPort}`,
    restUrl: `http://127.0.0.1:${restPort}`,
    kubo,
    get pid () { return child?.pid ?? -1 },
    get running () { return child !== undefined && child.exitCode === null && child.signalCode === null },
    stop,
    start
  }
}

async function waitForPeers (peer: ClusterPeer, size: number, authorization: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  let seen = 0
  while (Date.now() < deadline) {
    const res = await fetch(`${peer.restUrl}/id`, { headers: { authorization } }).catch(() => null)
    if (res?.ok === true) {
      const id = await res.json() as { cluster_peers?: unknown[] }
      seen = id.cluster_peers?.length ?? 0
      if (seen >= size) return
    }
    await sleep(500)
  }
  throw new Error(`the cluster formed with ${seen} of ${size} peers`)
}


