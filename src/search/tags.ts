// The filter words of a text row (pure). Besides its text, each row is indexed with words that
// name its scope and its time (day, month and year), in a column of their own that the owner's
// words never reach. A scope or time filter is then one more term of the full-text expression,
// intersected by the engine inside its own lists, instead of a join that visits every match.

/** The filter word of a scope: its name in hex, so no scope's word is another's or a real word. */
export function scopeTag (scope: string): string {
  return `s${Buffer.from(scope, 'utf8').toString('hex')}`
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')
const DAY = 86_400_000

/** The day, month and year words of an instant (none outside years 1–9999). */
export function timeTags (ms: number | null): string[] {
  if (ms === null || !Number.isFinite(ms)) return []
  const d = new Date(ms)
  const y = d.getUTCFullYear()
  if (y < 1 || y > 9999) return []
  const ym = `${pad(y, 4)}${pad(d.getUTCMonth() + 1)}`
  return [`d${ym}${pad(d.getUTCDate())}`, `m${ym}`, `y${pad(y, 4)}`]
}

/** The last scope's word and the last day's words, kept: a version's rows share them (indexing's hot path). */
let lastScope = { scope: '', tag: '' }
let lastDay = { day: Number.NaN, tags: '' }

/** The row's filter column: its scope's word and its time's words. */
export function rowTags (scope: string, ms: number | null): string {
  if (lastScope.scope !== scope || lastScope.tag === '') lastScope = { scope, tag: scopeTag(scope) }
  if (ms === null || !Number.isFinite(ms)) return lastScope.tag
  const day = Math.floor(ms / DAY)
  if (lastDay.day !== day) lastDay = { day, tags: timeTags(ms).join(' ') }
  return lastDay.tags === '' ? lastScope.tag : `${lastScope.tag} ${lastDay.tags}`
}

/** Date.UTC, years below 100 included (Date.UTC reads 0–99 as 1900–1999). */
const utc = (y: number, m: number, d: number): number => new Date(0).setUTCFullYear(y, m, d)
const MIN_MS = utc(1, 0, 1)
const MAX_MS = utc(10000, 0, 1)

/**
 * The fewest day, month and year words whose days cover [loMs, hiMs): whole years and months by
 * their word, the partial ones at the edges by their days. The days at the very edges may hold
 * rows outside the range: the caller checks each candidate's exact time.
 */
export function rangeTags (loMs: number, hiMs: number): string[] {
  const tags: string[] = []
  let day = new Date(Math.floor(Math.max(loMs, MIN_MS) / DAY) * DAY)
  const end = Math.min(hiMs, MAX_MS)
  while (day.getTime() < end) {
    const y = day.getUTCFullYear()
    const m = day.getUTCMonth()
    const nextYear = utc(y + 1, 0, 1)
    const nextMonth = utc(y, m + 1, 1)
    if (m === 0 && day.getUTCDate() === 1 && nextYear <= end) {
      tags.push(`y${pad(y, 4)}`)
      day = new Date(nextYear)
    } else if (day.getUTCDate() === 1 && nextMonth <= end) {
      tags.push(`m${pad(y, 4)}${pad(m + 1)}`)
      day = new Date(nextMonth)
    } else {
      tags.push(`d${pad(y, 4)}${pad(m + 1)}${pad(day.getUTCDate())}`)
      day = new Date(day.getTime() + DAY)
    }
  }
  return tags
}

/** An FTS5 expression matching rows with any of the words in the filter column (never empty). */
export function anyTag (tags: readonly string[]): string {
  return `tags : (${tags.join(' OR ')})`
}
