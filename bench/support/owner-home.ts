// A home as an owner's daemon leaves it, for the start rows: `count` files in the connectors'
// shapes (test/support/search-data.ts: ChatGPT conversations, Spotify months, Instagram exports,
// one small version each) POSTed through a real daemon of `checkout`, so every file is a real
// envelope (its `$schema`, encrypted blocks, records, the ingest journal) and the shipped schemas
// are installed; then the daemon runs until its search index has every version (pending 0) and is
// stopped. A restart of that home finds what a restart of an owner's finds: nothing to install,
// nothing to index, every file unchanged. (bench/support/million-home.ts builds in bulk instead,
// for the million: no blocks, no search index, envelopes the search cannot read back.)
import { generateVersions } from '../../test/support/search-data.js'
import { launchDaemon } from './daemon.js'

const CLIENTS = 16

/** Builds the home in `root` (an empty folder) with `checkout`'s daemon; `progress` is told the count every 1,000. */
export async function buildOwnerHome (checkout: string, root: string, count: number, progress: (done: number) => void = () => {}): Promise<void> {
  const d = await launchDaemon({ checkout, run: 'bin', home: root, env: { HEARTH_SYNC: 'false', HEARTH_UI: 'false' }, until: 'ready' })
  try {
    const versions = generateVersions({ records: count, perVersion: [1, 1, 1] })
    let done = 0
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (let next = versions.next(); next.done !== true; next = versions.next()) {
        const v = next.value
        const res = await d.call('POST', `/v1/data/${v.scope}?collectedAt=${encodeURIComponent(v.collectedAt)}`, v.data)
        if (res.status !== 201) throw new Error(`building the bench home: POST ${v.scope} answered ${res.status}: ${res.body.slice(0, 200)}`)
        if (++done % 1000 === 0) progress(done)
      }
    }))
    for (;;) {
      const res = await d.call('GET', '/v1/search?q=bench&limit=1')
      if (res.status === 200 && (JSON.parse(res.body) as { pending: number }).pending === 0) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const status = await d.json<{ files: { counts: Record<string, number> } }>('GET', '/v1/status')
    const stored = (status.files.counts.stored ?? 0) + (status.files.counts.registered ?? 0)
    if (stored !== count) throw new Error(`building the bench home: ${stored} of ${count} files stored`)
  } finally {
    await d.stop()
  }
}
