// @ts-check
// Spotify "Download your data" (Account privacy page) → spotify.savedTracks and
// spotify.streamingHistory.
//
// Two exports exist, both handled:
//   Account data ("Spotify Account Data/"):
//     YourLibrary.json                 {"tracks": [{"artist", "album", "track", "uri"}], "albums": ..., ...}
//     StreamingHistory_music_0.json    [{"endTime": "2024-01-01 12:34", "artistName", "trackName", "msPlayed"}]
//     StreamingHistory_podcast_0.json  [{"endTime", "podcastName", "episodeName", "msPlayed"}]
//     (older exports: StreamingHistory0.json, music and podcasts mixed)
//   Extended streaming history ("Spotify Extended Streaming History/"):
//     Streaming_History_Audio_2019-2021_0.json, ... (older: endsong_0.json)
//     [{"ts": "2024-01-01T12:34:56Z", "ms_played", "master_metadata_track_name", ...}]
// Spotify documents every time in these files as UTC. When one folder holds both exports, the
// extended history (a superset) is used and the account-data history is left out.
//
// spotify.savedTracks is a snapshot of the library: one item, dated source.exportedAt.
// spotify.streamingHistory is an event log, split into one item per calendar month (UTC) and
// dated by the month's last play: a lifetime of extended history stays far below the daemon's
// request size limit, and a later export repeats the finished months with the same time and
// content (the daemon answers duplicate), so only the months that grew become new versions.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

const LIBRARY_FILE = 'YourLibrary.json'
const ACCOUNT_HISTORY = /(^|\/)StreamingHistory(_music_|_podcast_)?\d+\.json$/
const EXTENDED_HISTORY = /(^|\/)(Streaming_History_Audio_[^/]*|endsong_\d+)\.json$/

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    const library = source.find(LIBRARY_FILE)[0]
    if (library === undefined) opts.note(`no ${LIBRARY_FILE} in this export: nothing for spotify.savedTracks`)
    else {
      const raw = await source.readJson(library.path)
      const tracks = toSavedTracks(raw)
      if (tracks === null) opts.note(`${library.path} has no "tracks" list: nothing for spotify.savedTracks`)
      else yield { scope: 'spotify.savedTracks', collectedAt: source.exportedAt, data: { tracks }, label: `${tracks.length} saved tracks` }
    }

    const extended = source.find(EXTENDED_HISTORY)
    const account = source.find(ACCOUNT_HISTORY)
    const files = extended.length > 0 ? extended : account
    if (files.length === 0) {
      opts.note('no StreamingHistory*.json or Streaming_History_Audio_*.json in this export: nothing for spotify.streamingHistory')
      return
    }
    if (extended.length > 0 && account.length > 0) opts.note('both the extended and the account-data streaming history are here; using the extended one')
    const plays = []
    let skipped = 0
    for (const file of [...files].sort((a, b) => a.path < b.path ? -1 : 1)) {
      const raw = await source.readJson(file.path)
      if (!Array.isArray(raw)) { opts.note(`${file.path} is not a list of plays; skipped`); continue }
      for (const r of raw) {
        const play = extended.length > 0 ? fromExtended(r) : fromAccountData(r)
        if (play === null) skipped++
        else plays.push(play)
      }
    }
    if (skipped > 0) opts.note(`${skipped} play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)`)
    for (const [month, monthPlays] of byMonth(plays)) {
      yield {
        scope: 'spotify.streamingHistory',
        collectedAt: /** @type {string} */ (monthPlays.at(-1)?.endedAt),
        data: { month, plays: monthPlays },
        label: `${month}: ${monthPlays.length} plays`
      }
    }
  }
}

/**
 * Plays grouped by the UTC month they ended in, months and plays in time order (ties keep file order).
 * @template {{endedAt: string}} P
 * @param {P[]} plays
 * @returns {[string, P[]][]}
 */
export function byMonth (plays) {
  const sorted = [...plays].sort((a, b) => a.endedAt < b.endedAt ? -1 : a.endedAt > b.endedAt ? 1 : 0)
  /** @type {Map<string, P[]>} */
  const months = new Map()
  for (const p of sorted) {
    const month = p.endedAt.slice(0, 7)
    const list = months.get(month)
    if (list === undefined) months.set(month, [p])
    else list.push(p)
  }
  return [...months]
}

/**
 * @param {unknown} raw
 * @returns {null | {track: string, artist: string, album?: string, uri?: string}[]}
 */
export function toSavedTracks (raw) {
  if (!isObject(raw) || !Array.isArray(raw.tracks)) return null
  const tracks = []
  for (const t of raw.tracks) {
    if (!isObject(t)) continue
    const track = str(t.track)
    const artist = str(t.artist)
    if (track === undefined || artist === undefined) continue
    const album = str(t.album)
    const uri = str(t.uri)
    tracks.push({ track, artist, ...(album !== undefined ? { album } : {}), ...(uri !== undefined ? { uri } : {}) })
  }
  return tracks
}

/**
 * Account-data format: "endTime" is "YYYY-MM-DD HH:MM" in UTC.
 * @param {unknown} r
 */
export function fromAccountData (r) {
  if (!isObject(r)) return null
  const endedAt = utcTime(r.endTime)
  const msPlayed = r.msPlayed
  if (endedAt === undefined || !isCount(msPlayed)) return null
  const track = str(r.trackName)
  const artist = str(r.artistName)
  if (track !== undefined && artist !== undefined) return { endedAt, msPlayed, kind: 'track', track, artist }
  const episode = str(r.episodeName)
  const show = str(r.podcastName)
  if (episode !== undefined && show !== undefined) return { endedAt, msPlayed, kind: 'episode', episode, show }
  return null
}

/**
 * Extended format. IP address, user agent and username are deliberately not kept.
 * @param {unknown} r
 */
export function fromExtended (r) {
  if (!isObject(r)) return null
  const endedAt = utcTime(r.ts)
  const msPlayed = r.ms_played
  if (endedAt === undefined || !isCount(msPlayed)) return null
  const details = {
    ...optional('platform', str(r.platform)),
    ...optional('country', str(r.conn_country)),
    ...optional('reasonStart', str(r.reason_start)),
    ...optional('reasonEnd', str(r.reason_end)),
    ...optional('shuffle', bool(r.shuffle)),
    ...optional('skipped', bool(r.skipped)),
    ...optional('offline', bool(r.offline)),
    ...optional('incognito', bool(r.incognito_mode))
  }
  const track = str(r.master_metadata_track_name)
  const artist = str(r.master_metadata_album_artist_name)
  if (track !== undefined && artist !== undefined) {
    return {
      endedAt, msPlayed, kind: 'track', track, artist,
      ...optional('album', str(r.master_metadata_album_album_name)),
      ...optional('uri', str(r.spotify_track_uri)),
      ...details
    }
  }
  const episode = str(r.episode_name)
  const show = str(r.episode_show_name)
  if (episode !== undefined && show !== undefined) {
    return { endedAt, msPlayed, kind: 'episode', episode, show, ...optional('uri', str(r.spotify_episode_uri)), ...details }
  }
  return null
}

/**
 * "2024-01-01 12:34", "2024-01-01 12:34:56" or "2024-01-01T12:34:56Z", all UTC → ISO with Z.
 * @param {unknown} v
 * @returns {string | undefined}
 */
export function utcTime (v) {
  if (typeof v !== 'string') return undefined
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(\.\d+)?Z?$/.exec(v.trim())
  if (m === null) return undefined
  const iso = `${m[1]}T${m[2]}${m[3] ?? ':00'}Z`
  return Number.isNaN(Date.parse(iso)) ? undefined : iso
}

/**
 * @template T
 * @param {string} key
 * @param {T | undefined} value
 * @returns {Record<string, T>}
 */
function optional (key, value) { return value === undefined ? {} : { [key]: value } }

/** @param {unknown} v @returns {string | undefined} */
function str (v) { return typeof v === 'string' && v.trim() !== '' ? v : undefined }

/** @param {unknown} v @returns {boolean | undefined} */
function bool (v) { return typeof v === 'boolean' ? v : undefined }

/** @param {unknown} v @returns {v is number} */
function isCount (v) { return Number.isInteger(v) && /** @type {number} */ (v) >= 0 }

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isObject (v) { return v !== null && typeof v === 'object' && !Array.isArray(v) }
