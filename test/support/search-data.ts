// Generated personal data in the shapes the shipped connectors produce (schemas/): ChatGPT
// conversations (one version per conversation, a record per message), Spotify streaming history
// (one version per month, a record per play) and Instagram posts (one version per export, a
// record per post). Deterministic for a seed, so a test knows which words each record holds, and
// sized by a record count up to millions for the benches (versions are yielded one at a time).

export type GeneratedScope = 'chatgpt.conversations' | 'spotify.streamingHistory' | 'instagram.posts'

export interface GeneratedVersion {
  scope: GeneratedScope
  collectedAt: string
  data: Record<string, unknown>
  /** Records (messages, plays, posts) in this version. */
  records: number
  /** One word only this version holds (in its first record's text), for exact-find checks. */
  marker: string
}

export interface GenerateOptions {
  /** Total records across all versions. */
  records: number
  seed?: number
  /** Share of ChatGPT messages, Spotify plays and Instagram posts (default 0.5 / 0.4 / 0.1). */
  mix?: [number, number, number]
  /** Records per version (default 40 messages per conversation, 2000 plays per month, 500 posts per export). */
  perVersion?: [number, number, number]
  /** Put a word unique to each record (markerWord of its number from `tagBase`) in its text, for exact-find checks. */
  tagEvery?: boolean
}

const WORDS = ('lease apartment landlord deposit contract garden recipe pasta bread coffee travel lisbon porto train ticket ' +
  'budget invoice salary tax refund python typescript database index query server deploy bug error fix test ' +
  'music album concert guitar piano jazz rock night morning summer winter river mountain beach forest city ' +
  'friend family birthday wedding holiday photo sunset dinner lunch breakfast running cycling yoga book novel ' +
  'poem story film series episode podcast news science history math physics chemistry biology health doctor').split(' ')
const ARTISTS = ['Nina Simone', 'Miles Davis', 'Björk', 'Radiohead', 'Caetano Veloso', 'Fela Kuti', 'Joni Mitchell', 'Aphex Twin', 'Mariza', 'Sigur Rós']
const ALBUMS = ['Blue', 'Kind of Blue', 'Homogenic', 'OK Computer', 'Transa', 'Zombie', 'Selected Ambient Works', 'Fado Curvo', 'Takk', 'Pastel Blues']

/** A small seeded PRNG (mulberry32): the same seed gives the same data everywhere. */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function sentence (rand: () => number, n: number): string {
  const out: string[] = []
  // skewed toward the first words, like natural text
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() ** 2 * WORDS.length)]!)
  return out.join(' ')
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The marker word of version `i`: letters only, unique, never one of WORDS. */
export function markerWord (i: number): string {
  let s = ''
  let n = i
  do { s = String.fromCharCode(97 + (n % 26)) + s; n = Math.floor(n / 26) } while (n > 0)
  return `zq${s}mark`
}

export function * generateVersions (opts: GenerateOptions): Generator<GeneratedVersion> {
  const rand = prng(opts.seed ?? 1)
  const [mChat, mPlay] = opts.mix ?? [0.5, 0.4, 0.1]
  const [perConv, perMonth, perExport] = opts.perVersion ?? [40, 2000, 500]
  const budget = [Math.round(opts.records * mChat), Math.round(opts.records * mPlay)]
  budget.push(opts.records - budget[0]! - budget[1]!)
  const start = Date.UTC(2020, 0, 1)
  let version = 0
  let record = 0
  /** The unique word of the next record (with its space), or '' when records are not tagged. */
  const tag = (): string => opts.tagEvery === true ? `${markerWord(1_000_000 + record++)} ` : ''
  // conversations: one version each, spread over time
  for (let left = budget[0]!, c = 0; left > 0; c++) {
    const n = Math.min(perConv, left)
    left -= n
    const marker = markerWord(version++)
    const t0 = start + c * 3_600_000 * 7
    const messages = Array.from({ length: n }, (_, i) => ({
      id: `m${c}-${i}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      text: (i === 0 ? `${marker} ` : '') + tag() + sentence(rand, 8 + Math.floor(rand() * 40)),
      contentType: 'text',
      createdAt: iso(t0 + i * 60_000)
    }))
    yield { scope: 'chatgpt.conversations', collectedAt: iso(t0 + n * 60_000), data: { id: `conv-${c}`, title: sentence(rand, 4), createdAt: iso(t0), updatedAt: iso(t0 + n * 60_000), messages }, records: n, marker }
  }
  // plays: one version per month, months going forward from 2015
  for (let left = budget[1]!, m = 0; left > 0; m++) {
    const n = Math.min(perMonth, left)
    left -= n
    const marker = markerWord(version++)
    const y = 2015 + Math.floor(m / 12)
    const month = `${y}-${String((m % 12) + 1).padStart(2, '0')}`
    const monthStart = Date.UTC(y, m % 12, 1)
    const step = Math.floor((28 * 86_400_000) / Math.max(n, 1))
    const plays = Array.from({ length: n }, (_, i) => {
      const a = Math.floor(rand() * ARTISTS.length)
      return { endedAt: iso(monthStart + i * step), msPlayed: 30_000 + Math.floor(rand() * 200_000), kind: 'track', track: (i === 0 ? `${marker} ` : '') + tag() + sentence(rand, 3), artist: ARTISTS[a]!, album: ALBUMS[a]! }
    })
    yield { scope: 'spotify.streamingHistory', collectedAt: plays[plays.length - 1]!.endedAt, data: { month, plays }, records: n, marker }
  }
  // Instagram posts: one version per export (a snapshot), each with its own posts here
  for (let left = budget[2]!, e = 0; left > 0; e++) {
    const n = Math.min(perExport, left)
    left -= n
    const marker = markerWord(version++)
    const t0 = Date.UTC(2019, 0, 1) + e * 86_400_000
    const posts = Array.from({ length: n }, (_, i) => ({
      createdAt: iso(t0 - i * 3_600_000),
      caption: (i === 0 ? `${marker} ` : '') + tag() + sentence(rand, 6 + Math.floor(rand() * 20)),
      media: [{ uri: `media/posts/${e}/${i}.jpg`, kind: 'photo' }]
    }))
    yield { scope: 'instagram.posts', collectedAt: iso(t0), data: { posts }, records: n, marker }
  }
}
