// @ts-check
// YouTube from Google Takeout ("YouTube and YouTube Music") → youtube.history, youtube.searches,
// youtube.subscriptions, youtube.playlists and youtube.likes (playlists.js), youtube.comments
// (comments.js).
//
// Layouts read (found by file name under any folder, so "Takeout/YouTube and YouTube Music/…"
// and the older "Takeout/YouTube/…" both work; Takeout names folders in the account's language,
// the files keep these English names only in English accounts):
//   history/watch-history.json    [{"header": "YouTube", "title": "Watched <video>", "titleUrl",
//                                   "subtitles": [{"name": "<channel>", "url"}], "time": ISO,
//                                   "products", "activityControls", "details"?: [{"name"}]}]
//   history/watch-history.html    the same as "My Activity" HTML (when HTML was chosen at export)
//   history/search-history.json   {"title": "Searched for <query>", "titleUrl": "…results?search_query=…", "time"}
//   history/search-history.html
//   subscriptions/subscriptions.csv   Channel Id,Channel Url,Channel Title
//   subscriptions/subscriptions.json  (before 2020) [{"snippet": {"title", "resourceId": {"channelId"}, "publishedAt"}}]
// HTML times are local with a zone abbreviation ("Jan 1, 2024, 12:00:00 PM CET"); an entry whose
// time cannot be read is left out and counted in a note.
// The search history also holds the Google Ads the account clicked ("Visited <ad>", details
// "From Google Ads", a googleadservices link that carries advertising ids): they are not
// searches and are left out, counted in a note.
//
// History and searches are event logs: one item per calendar month (UTC), newest first inside,
// dated by the month's newest entry, so a later export only adds the months that grew.
// Subscriptions are a snapshot: one item, dated source.exportedAt.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { byMonth, isObject, optional, readJsonOrSkip, skipKnownFiles, streamListOrSkip, text } from '../_shared/read.js'
import { readComments } from './comments.js'
import { readCsvOrSkip, takeoutIsoTime as isoTime } from './csv.js'
import { readPlaylists } from './playlists.js'
import { activitiesFromHtml, takeoutTime } from './takeout-html.js'

const HEADERS = new Set(['YouTube', 'YouTube Music'])
/** @type {import('../_shared/read.js').KnownFile[]} */
const KNOWN_UNUSED = [
  { pattern: /(^|\/)archive_browser\.html$/, reason: "Takeout's index page of the archive" },
  { pattern: /(^|\/)channels\/[^/]+\.csv$/, reason: "your channel's settings: not imported yet" },
  { pattern: /(^|\/)(video metadata|videos)\/[^/]+\.csv$/, reason: "your uploaded videos' details: not imported yet" },
  { pattern: /(^|\/)live chats\/[^/]+\.csv$/, reason: 'live-chat messages: not imported yet' },
  { pattern: /(^|\/)(my-comments|my-live-chat-messages)\/[^/]+\.html$/, reason: 'comments and live-chat messages before 2022, as a web page: not imported yet' },
  { pattern: /(^|\/)music \(library and uploads\)\//, reason: 'YouTube Music library and uploads: not imported yet' },
  { pattern: /(^|\/)posts\/[^/]+\.csv$/, reason: 'community posts: not imported yet' }
]

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readActivityLog(source, opts, {
      scope: 'youtube.history', stem: 'watch-history', noun: 'videos', key: 'items', convert: (a) => a
    })
    yield * readActivityLog(source, opts, {
      scope: 'youtube.searches', stem: 'search-history', noun: 'searches', key: 'searches', convert: toSearch, leaveOut: isAdClick
    })
    yield * readSubscriptions(source, opts)
    yield * readPlaylists(source, opts)
    yield * readComments(source, opts)
    skipKnownFiles(source, opts, KNOWN_UNUSED)
  }
}

/**
 * A Google Ads click recorded in the search history: "Visited <ad>", marked "From Google Ads".
 * @param {Activity} a
 */
export function isAdClick (a) {
  return a.details?.some((d) => d.name === 'From Google Ads') === true || /^Visited\s/.test(a.title)
}

/**
 * @typedef {{header: string, title: string, titleUrl?: string, subtitles?: {name: string, url?: string}[], time: string,
 *   products?: string[], activityControls?: string[], details?: {name: string}[], description?: string}} Activity
 */

/**
 * @param {ExportSource} source @param {ReadOptions} opts
 * @param {{scope: string, stem: string, noun: string, key: string, convert: (a: Activity) => ({time: string} & Record<string, unknown>) | null, leaveOut?: (a: Activity) => boolean}} log
 * @returns {AsyncGenerator<ConnectorItem>}
 */
async function * readActivityLog (source, opts, log) {
  const json = source.find(new RegExp(`(^|/)${log.stem}\\.json$`))
  const html = source.find(new RegExp(`(^|/)${log.stem}\\.html$`))
  if (json.length === 0 && html.length === 0) { opts.note(`no ${log.stem}.json or .html in this export: nothing for ${log.scope}`); return }
  if (json.length > 0) for (const f of html) opts.skip(f.path, `${json[0]?.path} holds the same ${log.noun}`)
  /** @type {Array<{time: string} & Record<string, unknown>>} */
  const entries = []
  let unusable = 0
  let adClicks = 0
  /** @param {Activity | null} a */
  const take = (a) => {
    if (a !== null && log.leaveOut?.(a) === true) { adClicks++; return }
    const entry = a === null ? null : log.convert(a)
    if (entry === null) unusable++
    else entries.push(entry)
  }
  if (json.length > 0) {
    for (const f of json) for await (const raw of streamListOrSkip(source, f.path, opts, log.noun)) take(fromJson(raw))
  } else {
    for (const f of html) {
      try {
        for await (const a of activitiesFromHtml(source.stream(f.path))) take(fromHtml(a))
      } catch (err) {
        if (!(err instanceof Error) || !['EXPORT_UNREADABLE', 'EXPORT_TOO_LARGE'].includes(/** @type {{code?: string}} */ (err).code ?? '')) throw err
        opts.skip(f.path, err.message)
      }
    }
  }
  if (unusable > 0) opts.note(`${unusable} ${log.stem} entr(y/ies) without a readable time, or from another product, left out`)
  if (adClicks > 0) opts.note(`${adClicks} Google Ads click(s) ("Visited …") in ${log.stem} left out: they are not ${log.noun} and their links carry advertising ids`)
  // Sort key is the time in milliseconds: JSON times carry a fraction, HTML times do not.
  for (const [month, list] of byMonth(entries, (e) => new Date(e.time).toISOString())) {
    const newestFirst = list.reverse()
    const { time: newest } = /** @type {{time: string}} */ (newestFirst[0])
    yield {
      scope: log.scope,
      collectedAt: newest,
      data: { month, [log.key]: newestFirst.map((e) => log.key === 'items' ? e : withoutTime(e)) },
      label: `${month}: ${newestFirst.length} ${log.noun}`
    }
  }
}

/** @param {Record<string, unknown>} e */
function withoutTime (e) { const { time: _t, ...rest } = e; return rest }

/**
 * A watch or search entry of the JSON history, normalised; null without header, title or time.
 * @param {unknown} raw
 * @returns {Activity | null}
 */
export function fromJson (raw) {
  if (!isObject(raw)) return null
  const header = text(raw.header)
  const title = text(raw.title)
  const time = isoTime(raw.time)
  if (header === undefined || !HEADERS.has(header) || title === undefined || time === undefined) return null
  const subtitles = Array.isArray(raw.subtitles)
    ? raw.subtitles.filter((s) => isObject(s) && text(s.name) !== undefined).map((s) => ({ name: s.name, ...optional('url', httpUrl(s.url)) }))
    : []
  const strings = (/** @type {unknown} */ v) => Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []
  const details = Array.isArray(raw.details) ? raw.details.filter((d) => isObject(d) && text(d.name) !== undefined).map((d) => ({ name: d.name })) : []
  return {
    header,
    title,
    ...optional('titleUrl', httpUrl(raw.titleUrl)),
    ...(subtitles.length > 0 ? { subtitles } : {}),
    time,
    ...(strings(raw.products).length > 0 ? { products: strings(raw.products) } : {}),
    ...(strings(raw.activityControls).length > 0 ? { activityControls: strings(raw.activityControls) } : {}),
    ...(details.length > 0 ? { details } : {}),
    ...optional('description', text(raw.description))
  }
}

/**
 * An entry of the HTML history in the JSON shape; null without header, title or readable time.
 * @param {import('./takeout-html.js').HtmlActivity} a
 * @returns {Activity | null}
 */
export function fromHtml (a) {
  if (!HEADERS.has(a.header) || a.lines.length < 2) return null
  const [first, ...rest] = a.lines
  const last = rest.at(-1)
  const local = last !== undefined && last.length === 1 && last[0]?.href === undefined ? takeoutTime(last[0].text) : undefined
  const time = local === undefined ? undefined : new Date(local).toISOString()
  const title = first?.map((s) => s.text).filter((t) => t !== '').join(' ')
  if (time === undefined || title === undefined || title === '') return null
  const titleUrl = httpUrl(first?.find((s) => s.href !== undefined)?.href)
  const subtitles = rest.slice(0, -1).flatMap((line) => line.filter((s) => s.href !== undefined && s.text !== '').map((s) => ({ name: s.text, ...optional('url', httpUrl(s.href)) })))
  return {
    header: a.header,
    title,
    ...optional('titleUrl', titleUrl),
    ...(subtitles.length > 0 ? { subtitles } : {}),
    time,
    ...(a.products.length > 0 ? { products: a.products } : {}),
    ...(a.details.length > 0 ? { details: a.details.map((name) => ({ name })) } : {})
  }
}

/**
 * A search: the query from the results URL (exact), else the title without "Searched for ".
 * @param {Activity} a
 * @returns {({time: string} & Record<string, unknown>) | null}
 */
export function toSearch (a) {
  let query
  if (a.titleUrl !== undefined) {
    try { query = text(new URL(a.titleUrl).searchParams.get('search_query')) } catch { query = undefined }
  }
  if (query === undefined && /^Searched for\s/.test(a.title)) query = text(a.title.replace(/^Searched for\s+/, ''))
  if (query === undefined) return null
  return { query, searchedAt: a.time, ...optional('url', a.titleUrl), time: a.time }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readSubscriptions (source, opts) {
  const csv = source.find(/(^|\/)subscriptions\.csv$/)[0]
  const json = source.find(/(^|\/)subscriptions\/subscriptions\.json$/)[0]
  if (csv === undefined && json === undefined) { opts.note('no subscriptions.csv in this export: nothing for youtube.subscriptions'); return }
  /** @type {Array<{id: string, url?: string, title: string, subscribedAt?: string}> | undefined} */
  let channels
  if (csv !== undefined) {
    const rows = await readCsvOrSkip(source, csv.path, opts)
    if (rows === undefined) return
    // Columns by position: the header row is in the account's language.
    channels = rows.slice(1).map((r) => ({ id: r[0]?.trim() ?? '', url: httpUrl(r[1]?.trim()), title: r[2]?.trim() ?? '' }))
      .filter((c) => c.id !== '' && c.title !== '').map((c) => ({ id: c.id, ...optional('url', c.url), title: c.title }))
  } else if (json !== undefined) {
    const raw = await readJsonOrSkip(source, json.path, opts)
    if (raw === undefined) return
    if (!Array.isArray(raw)) { opts.skip(json.path, 'not a list of subscriptions'); return }
    channels = []
    for (const s of raw) {
      const snippet = isObject(s) && isObject(s.snippet) ? s.snippet : undefined
      const id = snippet !== undefined && isObject(snippet.resourceId) ? text(snippet.resourceId.channelId) : undefined
      const title = text(snippet?.title)
      if (id === undefined || title === undefined) continue
      channels.push({ id, url: `https://www.youtube.com/channel/${id}`, title, ...optional('subscribedAt', isoTime(snippet?.publishedAt)) })
    }
  }
  if (channels === undefined) return
  yield { scope: 'youtube.subscriptions', collectedAt: source.exportedAt, data: { channels }, label: `${channels.length} channels` }
}

/** @param {unknown} v @returns {string | undefined} */
function httpUrl (v) { return typeof v === 'string' && /^https?:\/\/\S+$/.test(v) ? v : undefined }
