// Reading one JSON file out of a large export zip, four ways, side by side:
//   yauzl    — src/connectors/zip.ts (yauzl): central directory + one entry, streamed through node:zlib, collected whole
//   yauzl-js — the same entry parsed as it streams (source.streamJson, @streamparser/json), values counted and dropped
//   fflate-s — the whole zip read into memory, fflate unzipSync with a filter (the simple fflate way)
//   fflate-a — the whole zip read into memory, fflate unzip (async, worker threads) with a filter
// (The hand-written reader yauzl replaced measured like `yauzl` here: same inflate, same stall.)
// The export is a ChatGPT-like conversations.json (compressible JSON) next to incompressible media,
// the shape of a real export with images. Reports wall time, the longest event-loop stall (what a
// daemon serving its socket at the same time would feel) and the RSS growth.
// Run: node --import tsx bench/connectors-zip.ts [jsonMB] [mediaMB]
import '../src/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unzip, unzipSync, zipSync, type Zippable } from 'fflate'
import { openExport } from '../src/connectors/source.js'

const jsonMB = Number(process.argv[2] ?? 40)
const mediaMB = Number(process.argv[3] ?? 150)

function conversationsJson (targetBytes: number): Uint8Array {
  const parts: string[] = []
  let size = 2
  for (let i = 0; size < targetBytes; i++) {
    const s = JSON.stringify({ id: `conv-${i}`, title: `Conversation ${i}`, create_time: 1704067200 + i, mapping: { [`n${i}`]: { message: { content: { parts: [`message ${i} `.repeat(40) + '日本語 🚀']} } } } })
    parts.push(s)
    size += s.length + 1
  }
  return Buffer.from(`[${parts.join(',')}]`)
}

async function measure (name: string, fn: () => Promise<Uint8Array>): Promise<void> {
  global.gc?.()
  const rss0 = process.memoryUsage().rss
  // A 2 ms ticker: the longest gap between its ticks is the longest time the loop was blocked.
  let last = performance.now()
  let stall = 0
  const ticker = setInterval(() => { const now = performance.now(); stall = Math.max(stall, now - last); last = now }, 2)
  const t0 = performance.now()
  const out = await fn()
  const ms = performance.now() - t0
  await new Promise((resolve) => setTimeout(resolve, 10))
  clearInterval(ticker)
  const rss = process.memoryUsage().rss - rss0
  console.log(`${name.padEnd(9)} ${ms.toFixed(0).padStart(6)} ms   longest event-loop stall ${stall.toFixed(0).padStart(5)} ms   rss ${rss >= 0 ? '+' : ''}${(rss / 1048576).toFixed(0).padStart(4)} MB   (${(out.length / 1048576).toFixed(1)} MB out)`)
}

const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-zip-'))
try {
  const json = conversationsJson(jsonMB * 1048576)
  const files: Zippable = { 'conversations.json': [json, { level: 6 }], 'chat.html': [Buffer.from('<html></html>'), {}] }
  for (let i = 0; i < mediaMB; i++) files[`file-${i}.jpg`] = [randomBytes(1048576), { level: 0 }]
  const path = join(dir, 'export.zip')
  await writeFile(path, zipSync(files))
  console.log(`export: ${jsonMB} MB conversations.json + ${mediaMB} MB media; reading conversations.json`)

  for (let round = 0; round < 2; round++) {
    await measure('yauzl', async () => {
      const source = await openExport(path)
      try { return await source.readBytes('conversations.json') } finally { await source.close() }
    })
    await measure('yauzl-js', async () => {
      const source = await openExport(path)
      let n = 0
      try { for await (const _ of source.streamJson('conversations.json')) n++ } finally { await source.close() }
      return Buffer.alloc(n)
    })
    await measure('fflate-s', async () => unzipSync(await readFile(path), { filter: (f) => f.name === 'conversations.json' })['conversations.json']!)
    await measure('fflate-a', async () => {
      const buf = await readFile(path)
      return await new Promise<Uint8Array>((resolve, reject) => unzip(buf, { filter: (f) => f.name === 'conversations.json' }, (err, out) => err !== null ? reject(err) : resolve(out['conversations.json']!)))
    })
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
