// The search's budgets against the real daemon (issue 23): generated records in the connectors'
// shapes (test/support/search-data.ts) posted through the socket, then
//   - index rate: the search index deleted and built again by a restarted daemon from every
//     stored version (read back, extracted, indexed), records per second;
//   - start: time to `ready` with the full index present, and with none (built after the start);
//   - query p95 through GET /v1/search (a mix of common, rare, prefix, phrase and filtered queries);
//   - a new file searchable: from the POST's answer until a search finds it;
//   - idle RSS of the daemon holding the index.
// Budgets: ≥ 20,000 records/s, p95 ≤ 50 ms at 1,000,000 records, ≤ 1 s, ≤ 150 MB, start unchanged.
// Run: npm run build && node --import tsx bench/search.ts [--records N] (default 50000; the size is 1000000)
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { launchDaemon, type RunningDaemon } from './support/daemon.js'
import { generateVersions, markerWord } from '../test/support/search-data.js'

function arg (name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}

const records = arg('--records', 50_000)
const home = await mkdtemp(join(tmpdir(), 'hearth-bench-search-'))
const start = async (): Promise<RunningDaemon> => await launchDaemon({ run: 'dist', home, env: { HEARTH_SYNC: 'false', HEARTH_MDNS: 'false', HEARTH_LOG_LEVEL: 'warn', HEARTH_UI_LISTEN: '127.0.0.1:0' }, until: 'ready' })
const searchPath = (q: string, extra = ''): string => `/v1/search?q=${encodeURIComponent(q)}&limit=20${extra}`

async function untilComplete (d: RunningDaemon): Promise<void> {
  for (;;) {
    const answer = await d.json('GET', searchPath('zzzz'))
    if (answer.complete === true) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function rssMb (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024)
}

const p95 = (ms: number[]): number => [...ms].sort((a, b) => a - b)[Math.floor(ms.length * 0.95)]!
const rows: Array<[string, string]> = []
let d = await start()
try {
  console.log(`posting ${records} generated records…`)
  const versions = generateVersions({ records })
  let posted = 0
  let count = 0
  const t0 = performance.now()
  const worker = async (): Promise<void> => {
    for (let next = versions.next(); next.done !== true; next = versions.next()) {
      const v = next.value
      const res = await d.call('POST', `/v1/data/${v.scope}?collectedAt=${encodeURIComponent(v.collectedAt)}`, v.data)
      if (res.status >= 300) throw new Error(`POST ${v.scope}: ${res.status} ${res.body.slice(0, 200)}`)
      posted += v.records
      count++
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
  await untilComplete(d)
  rows.push(['posted and searchable (ingest included)', `${posted} records in ${count} versions, ${Math.round((performance.now() - t0) / 1000)} s`])
  const warmStart = d.startMs
  await d.stop()

  await rm(join(home, 'search'), { recursive: true, force: true })
  d = await start()
  const tIndex = performance.now()
  await untilComplete(d)
  const indexS = (performance.now() - tIndex) / 1000
  rows.push(['index rate (rebuilt from the stored versions)', `${Math.round(posted / indexS)} records/s (${indexS.toFixed(1)} s)`])
  rows.push(['start without an index (built after ready)', `${Math.round(d.startMs)} ms`])
  await d.stop()
  d = await start()
  rows.push(['start with the full index', `${Math.round(d.startMs)} ms (first start, empty home: ${Math.round(warmStart)} ms)`])

  const queries = ['lease', 'jazz guitar', 'coff*', '"summer night"', 'health', 'nina simone', markerWord(Math.floor(count / 2)), 'zzzznotthere']
  const filtered = ['&scope=spotify.*', '&since=2020-06-01&until=2021-01-01', '&scope=chatgpt.conversations&since=2021-01-01']
  const times: number[] = []
  const engine: number[] = []
  for (let round = 0; round < 10; round++) {
    for (const q of queries) {
      for (const extra of ['', ...(round % 3 === 0 ? filtered : [])]) {
        const t = performance.now()
        const answer = await d.json('GET', searchPath(q, extra))
        times.push(performance.now() - t)
        engine.push(answer.tookMs)
      }
    }
  }
  rows.push(['query p95 (through the socket / in the daemon)', `${p95(times).toFixed(1)} ms / ${p95(engine).toFixed(1)} ms over ${times.length} queries`])

  const latencies: number[] = []
  for (let i = 0; i < 5; i++) {
    const word = `zqfresh${i}mark`
    const res = await d.call('POST', `/v1/data/chatgpt.conversations?collectedAt=2030-01-0${i + 1}T00:00:00Z`, { id: `fresh${i}`, title: word, messages: [{ id: 'm', role: 'user', text: `${word} new`, contentType: 'text' }] })
    if (res.status >= 300) throw new Error(`POST: ${res.status} ${res.body.slice(0, 200)}`)
    const t = performance.now()
    while ((await d.json('GET', searchPath(word))).hits.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    latencies.push(performance.now() - t)
  }
  rows.push(['a new file searchable after its POST (max of 5)', `${Math.round(Math.max(...latencies))} ms`])
  await new Promise((resolve) => setTimeout(resolve, 5000))
  rows.push(['idle RSS of the daemon', `${await rssMb(d.pid)} MB`])
} finally {
  await d.stop().catch(() => {})
  await rm(home, { recursive: true, force: true })
}
console.table(Object.fromEntries(rows))
