// Memory of the connectors on the exports that hurt: each case runs in its own child process, so
// the cases do not share a heap, and reports the RSS when it starts (node, tsx and the modules
// loaded) and the highest RSS sampled every 5 ms while it runs.
//   chatgpt-stream  — a conversations.json of N MB in a zip, read by the chatgpt connector as it
//                     streams (what `hearth import chatgpt` does), items counted and dropped
//   chatgpt-whole   — the same entry read whole and JSON.parse'd (what the connector did before)
//   twitter-stream  — a data/tweets.js (window.YTD.tweets.part0 = [...]) of N MB, read by the twitter
//                     connector (months held until the file ends, each tweet kept in its compact form)
//   reddit-stream   — a comments.csv of N MB, read by the reddit connector row by row
//   maps-points     — a Takeout Records.json of N MB (a point every 20 s), read by the google-maps
//                     connector with --with googlemaps.locations (at most 200,000 points held)
//   entries-100k    — an Instagram-like archive of 100,000 entries (media and a few JSON files)
//                     through runImport with a no-op submit: open, list, read, list unread
//   zip-bomb        — a ~2 MB zip whose conversations.json declares 100 bytes and inflates to ~2 GB
// Run: node --import tsx bench/connectors-memory.ts [conversationsMB] [--quick]
import '../src/polyfill.js'
import { spawnSync } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateRawSync, crc32 } from 'node:zlib'
import { Zip, ZipDeflate, zipSync, type Zippable } from 'fflate'
import { runImport } from '../src/connectors/import.js'
import { loadConnectors } from '../src/connectors/loader.js'
import { openExport } from '../src/connectors/source.js'
import { silentLogger } from '../src/log.js'

const PLUGINS = fileURLToPath(new URL('../plugins', import.meta.url))
const SELF = fileURLToPath(import.meta.url)

async function connector (id: string): Promise<Awaited<ReturnType<typeof loadConnectors>>['connectors'][number]> {
  const c = (await loadConnectors(PLUGINS)).connectors.find((x) => x.id === id)
  if (c === undefined) throw new Error(`no connector ${id}`)
  return c
}

/** One realistic conversation of about 30 KB: a system node, then user/assistant turns. */
function conversation (i: number): string {
  const mapping: Record<string, unknown> = { root: { id: 'root', message: null, parent: null, children: ['n0'] } }
  let parent = 'root'
  for (let t = 0; t < 20; t++) {
    const id = `n${t}`
    mapping[id] = {
      id,
      message: {
        id,
        author: { role: t % 2 === 0 ? 'user' : 'assistant', name: null, metadata: {} },
        create_time: 1704067200 + i * 100 + t,
        content: { content_type: 'text', parts: [`turn ${t} of conversation ${i}: ` + 'Lorem ipsum dolor sit amet, 日本語, emojis 🚀 '.repeat(30)] },
        status: 'finished_successfully',
        metadata: t % 2 === 1 ? { model_slug: 'gpt-4o' } : {},
        recipient: 'all'
      },
      parent,
      children: t < 19 ? [`n${t + 1}`] : []
    }
    parent = id
  }
  return JSON.stringify({ title: `Conversation ${i}`, create_time: 1704067200 + i * 100, update_time: 1704067200 + i * 100 + 50, mapping, current_node: 'n19', conversation_id: `conv-${i}`, id: `conv-${i}`, default_model_slug: 'gpt-4o' })
}

/**
 * A zip with one entry `name` holding generated records (a JSON list by default: `before`,
 * records joined by `separator`, `after`), about `mb` MB, streamed to disk: the generator never holds the whole text.
 */
async function writeListZip (path: string, name: string, mb: number, record: (i: number) => string, { before = '[', after = ']', separator = ',' } = {}): Promise<number> {
  const out = createWriteStream(path)
  const zip = new Zip((err, chunk) => { if (err !== null) throw err; out.write(chunk) })
  const file = new ZipDeflate(name, { level: 1 })
  zip.add(file)
  let bytes = Buffer.byteLength(before)
  file.push(Buffer.from(before))
  for (let i = 0; bytes < mb * 1048576; i++) {
    const s = (i > 0 ? separator : '') + record(i)
    bytes += Buffer.byteLength(s)
    file.push(Buffer.from(s))
  }
  file.push(Buffer.from(after), true)
  zip.end()
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => err != null ? reject(err) : resolve()))
  return bytes
}

/** A zip whose comments.csv is about `mb` MB of Reddit comment rows, newest first, streamed to disk. */
async function writeRedditZip (path: string, mb: number): Promise<number> {
  const header = 'id,permalink,date,ip,subreddit,gildings,link,parent,body,media\r\n'
  const start = Date.UTC(2024, 0, 1)
  const row = (i: number): string => {
    const id = `k${i.toString(36)}`
    const date = new Date(start - i * 600_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
    return `${id},https://www.reddit.com/r/bench/comments/abc/x/${id}/,${date},,bench,0,https://www.reddit.com/r/bench/comments/abc/x/,t3_abc,"comment ${i}: ${'Lorem ipsum, dolor ""sit"" amet 日本語 🚀 '.repeat(6)}",`
  }
  return await writeListZip(path, 'comments.csv', mb, row, { before: header, after: '\r\n', separator: '\r\n' })
}

/** One Records.json location of about 330 bytes, as Takeout wrote them (2022–2024), a point every 20 s. */
function location (i: number): string {
  return JSON.stringify({
    latitudeE7: 488583701 + (i % 5000), longitudeE7: 22944813 - (i % 3000), accuracy: 12 + (i % 40), altitude: 35, verticalAccuracy: 3,
    activity: [{ activity: [{ type: 'STILL', confidence: 90 }, { type: 'ON_FOOT', confidence: 5 }], timestamp: new Date(Date.UTC(2019, 0, 1) + i * 20_000).toISOString() }],
    source: 'WIFI', deviceTag: -1234567890, platformType: 'ANDROID', osLevel: 33, serverTimestamp: new Date(Date.UTC(2019, 0, 1) + i * 20_000 + 900).toISOString(),
    deviceTimestamp: new Date(Date.UTC(2019, 0, 1) + i * 20_000 + 500).toISOString(), batteryCharging: false, formFactor: 'PHONE', timestamp: new Date(Date.UTC(2019, 0, 1) + i * 20_000).toISOString()
  })
}

/** One tweet of about 900 bytes as X archives write it, one an hour (ids carry their time). */
function tweet (i: number): string {
  const ms = Date.UTC(2014, 0, 1) + i * 3_600_000
  const id = ((BigInt(ms) - 1288834974657n) << 22n) + BigInt(i % 4096)
  return JSON.stringify({
    tweet: {
      id_str: String(id), id: String(id), created_at: new Date(ms).toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+) ([\d:]+) GMT$/, '$1 $3 $2 $5 +0000 $4'),
      full_text: `tweet ${i}: ` + 'Lorem ipsum dolor sit amet, 日本語 🚀 '.repeat(4), lang: 'en', favorite_count: String(i % 50), retweet_count: '0',
      source: '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>', truncated: false, retweeted: false, favorited: false,
      display_text_range: ['0', '140'], edit_info: { initial: { editTweetIds: [String(id)], editableUntil: '2024-01-01T00:00:00.000Z', isEditEligible: false, editsRemaining: '5' } },
      entities: { hashtags: [{ text: 'bench', indices: ['0', '6'] }], symbols: [], user_mentions: [{ name: 'Someone', screen_name: 'someone', id_str: '12345', id: '12345', indices: ['7', '15'] }], urls: [] }
    }
  })
}

async function writeManyEntriesZip (path: string, entries: number): Promise<void> {
  const files: Zippable = {}
  const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])
  for (let i = 0; i < entries - 3; i++) files[`your_instagram_activity/media/posts/2024${String(i % 12 + 1).padStart(2, '0')}/${17900000000000000 + i}.jpg`] = [jpeg, { level: 0 }]
  files['your_instagram_activity/media/posts_1.json'] = Buffer.from(JSON.stringify([{ media: [{ uri: 'your_instagram_activity/media/posts/202401/17900000000000000.jpg', creation_timestamp: 1704100000, title: 'x' }] }]))
  files['connections/followers_and_following/followers_1.json'] = Buffer.from('[]')
  files['start_here.html'] = Buffer.from('<html></html>')
  await writeFile(path, withZip64Count(zipSync(files), entries))
}

/**
 * fflate writes the entry count in the 16-bit end record only (100,000 wraps to 34,464); an
 * archive of more than 65,535 entries needs the ZIP64 end record and locator, as real exports have.
 */
function withZip64Count (zip: Uint8Array, entries: number): Buffer {
  const buf = Buffer.from(zip)
  const eocdAt = buf.length - 22
  const cdSize = buf.readUInt32LE(eocdAt + 12)
  const cdOffset = buf.readUInt32LE(eocdAt + 16)
  const z64 = Buffer.alloc(56)
  z64.writeUInt32LE(0x06064b50, 0); z64.writeBigUInt64LE(44n, 4); z64.writeUInt16LE(45, 12); z64.writeUInt16LE(45, 14)
  z64.writeBigUInt64LE(BigInt(entries), 24); z64.writeBigUInt64LE(BigInt(entries), 32)
  z64.writeBigUInt64LE(BigInt(cdSize), 40); z64.writeBigUInt64LE(BigInt(cdOffset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0); locator.writeBigUInt64LE(BigInt(eocdAt), 8); locator.writeUInt32LE(1, 16)
  const eocd = Buffer.from(buf.subarray(eocdAt))
  eocd.writeUInt16LE(0xffff, 8); eocd.writeUInt16LE(0xffff, 10)
  return Buffer.concat([buf.subarray(0, eocdAt), z64, locator, eocd])
}

/** A zip whose only entry declares 100 bytes but inflates to `inflatedMB`. */
async function writeBomb (path: string, inflatedMB: number): Promise<number> {
  const data = Buffer.alloc(inflatedMB * 1048576, 0x20)
  const body = deflateRawSync(data, { level: 9 })
  const name = Buffer.from('conversations.json')
  const header = (central: boolean): Buffer => {
    const b = Buffer.alloc(central ? 46 : 30)
    b.writeUInt32LE(central ? 0x02014b50 : 0x04034b50, 0)
    const o = central ? 2 : 0
    b.writeUInt16LE(20, 4); if (central) b.writeUInt16LE(20, 6)
    b.writeUInt16LE(8, 8 + o); b.writeUInt32LE(crc32(data) >>> 0, 14 + o); b.writeUInt32LE(body.length, 18 + o); b.writeUInt32LE(100, 22 + o)
    b.writeUInt16LE(name.length, 26 + o)
    return b
  }
  const local = Buffer.concat([header(false), name, body])
  const central = Buffer.concat([header(true), name])
  const eocd = Buffer.alloc(22)
  eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(1, 8); eocd.writeUInt16LE(1, 10); eocd.writeUInt32LE(central.length, 12); eocd.writeUInt32LE(local.length, 16)
  const zip = Buffer.concat([local, central, eocd])
  await writeFile(path, zip)
  return zip.length
}

/** The cases that run a connector over one large streamed file: which connector, what its items hold. */
const STREAMED: Record<string, { connector: string; key: string; include?: string[] }> = {
  'twitter-stream': { connector: 'twitter', key: 'tweets' },
  'reddit-stream': { connector: 'reddit', key: 'comments' },
  'maps-points': { connector: 'google-maps', key: 'points', include: ['googlemaps.locations'] }
}

async function runCase (name: string, path: string): Promise<string> {
  const t0 = performance.now()
  if (name === 'chatgpt-stream') {
    const c = await connector('chatgpt')
    const source = await openExport(path)
    let n = 0
    for await (const _ of c.module.read(source, { note: () => {}, skip: () => {}, logger: silentLogger() })) n++
    await source.close()
    return `${n} conversations in ${((performance.now() - t0) / 1000).toFixed(1)} s`
  }
  if (name === 'chatgpt-whole') {
    const source = await openExport(path)
    const list = await source.readJson('conversations.json') as unknown[]
    await source.close()
    return `${list.length} conversations parsed whole in ${((performance.now() - t0) / 1000).toFixed(1)} s`
  }
  const streamed = STREAMED[name]
  if (streamed !== undefined) {
    const c = await connector(streamed.connector)
    const source = await openExport(path)
    let n = 0
    let items = 0
    const opts = { note: () => {}, skip: () => {}, logger: silentLogger(), include: new Set(streamed.include ?? []) }
    for await (const item of c.module.read(source, opts)) { items++; n += (item.data[streamed.key] as unknown[] | undefined)?.length ?? 0 }
    await source.close()
    return `${n} ${streamed.key} in ${items} items in ${((performance.now() - t0) / 1000).toFixed(1)} s`
  }
  if (name === 'entries-100k') {
    const summary = await runImport({ connector: await connector('instagram'), source: path, submit: async () => ({ status: 'stored' }) })
    return `${summary.total.items} items, ${summary.skipped.length} listed as not imported, note: "${summary.notes.at(-1)?.slice(0, 40) ?? ''}…" in ${((performance.now() - t0) / 1000).toFixed(1)} s`
  }
  if (name === 'zip-bomb') {
    const source = await openExport(path)
    try { await source.readJson('conversations.json'); return 'read?!' } catch (err) { return `stopped: ${(err as { code?: string }).code} in ${(performance.now() - t0).toFixed(0)} ms` } finally { await source.close() }
  }
  throw new Error(`unknown case ${name}`)
}

if (process.argv[2] === '--case') {
  await connector('chatgpt') // load the plugins before the start figure
  global.gc?.()
  const start = process.memoryUsage().rss
  let peak = start
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  const detail = await runCase(process.argv[3]!, process.argv[4]!)
  peak = Math.max(peak, process.memoryUsage().rss)
  clearInterval(sampler)
  console.log(JSON.stringify({ detail, startMB: Math.round(start / 1048576), peakMB: Math.round(peak / 1048576) }))
  process.exit(0)
}

const quick = process.argv.includes('--quick')
const mb = Number(process.argv.find((a, i) => i >= 2 && /^\d+$/.test(a)) ?? (quick ? 30 : 300))
const dir = await mkdtemp(join(tmpdir(), 'hearth-bench-connectors-'))
try {
  const conversations = join(dir, 'chatgpt.zip')
  const bytes = await writeListZip(conversations, 'conversations.json', mb, conversation)
  const reddit = join(dir, 'reddit.zip')
  const redditBytes = await writeRedditZip(reddit, mb)
  const maps = join(dir, 'maps.zip')
  const mapsBytes = await writeListZip(maps, 'Takeout/Location History (Timeline)/Records.json', mb, location, { before: '{"locations": [', after: ']}' })
  const tweets = join(dir, 'twitter.zip')
  const tweetBytes = await writeListZip(tweets, 'data/tweets.js', mb, tweet, { before: 'window.YTD.tweets.part0 = [' })
  const many = join(dir, 'instagram-100k.zip')
  await writeManyEntriesZip(many, quick ? 10_000 : 100_000)
  const bomb = join(dir, 'bomb.zip')
  const bombBytes = await writeBomb(bomb, quick ? 200 : 2000)
  const cases: Array<[string, string, string]> = [
    ['chatgpt-stream', conversations, `conversations.json of ${(bytes / 1048576).toFixed(0)} MB`],
    ['chatgpt-whole', conversations, `conversations.json of ${(bytes / 1048576).toFixed(0)} MB`],
    ['twitter-stream', tweets, `tweets.js of ${(tweetBytes / 1048576).toFixed(0)} MB`],
    ['reddit-stream', reddit, `comments.csv of ${(redditBytes / 1048576).toFixed(0)} MB`],
    ['maps-points', maps, `Records.json of ${(mapsBytes / 1048576).toFixed(0)} MB`],
    ['entries-100k', many, `${quick ? '10,000' : '100,000'} entries`],
    ['zip-bomb', bomb, `${(bombBytes / 1048576).toFixed(1)} MB zip, declares 100 bytes, inflates to ${quick ? 200 : 2000} MB`]
  ]
  for (const [name, path, what] of cases) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', SELF, '--case', name, path], { encoding: 'utf8', maxBuffer: 1 << 20 })
    const line = r.stdout.trim().split('\n').at(-1) ?? ''
    let shown: string
    try {
      const j = JSON.parse(line) as { detail: string; startMB: number; peakMB: number }
      shown = `RSS ${String(j.startMB).padStart(4)} MB at start, peak ${String(j.peakMB).padStart(5)} MB (+${j.peakMB - j.startMB})   ${j.detail}`
    } catch { shown = `failed: ${(r.stderr || line).trim().split('\n').slice(-2).join(' ')}` }
    console.log(`${name.padEnd(15)} ${what.padEnd(58)} ${shown}`)
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
