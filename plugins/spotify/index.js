// @ts-check
// Spotify "Download your data" (Account privacy page) → spotify.savedTracks, spotify.playlists
// and spotify.streamingHistory.
//
// Two exports exist, both handled, alone, together, or in several archives:
//   Account data ("Spotify Account Data/", "MyData/" in older ones):
//     YourLibrary.json                 {"tracks": [{"artist", "album", "track", "uri"}], "albums": ..., ...}
//     Playlist1.json, Playlist2.json   {"playlists": [{"name", "lastModifiedDate", "description"?,
//                                        "numberOfFollowers"?, "items": [{"track": {"trackName",
//                                        "artistName", "albumName", "trackUri"} | null, "episode":
//                                        {"episodeName", "showName", "episodeUri"} | null,
//                                        "localTrack": {"uri"} | null, "addedDate"?}]}]}
//     StreamingHistory_music_0.json    [{"endTime": "2024-01-01 12:34", "artistName", "trackName", "msPlayed"}]
//     StreamingHistory_podcast_0.json  [{"endTime", "podcastName", "episodeName", "msPlayed"}]
//     (older exports: StreamingHistory0.json, music and podcasts mixed)
//   Extended streaming history ("Spotify Extended Streaming History/", often its own archive):
//     Streaming_History_Audio_2019-2021_0.json, ... (older: endsong_0.json)
//     [{"ts": "2024-01-01T12:34:56Z", "ms_played", "master_metadata_track_name", ...,
//       "ip_addr" (2023 and later) or "ip_addr_decrypted" (before), "user_agent_decrypted", "username"}]
//     Streaming_History_Video_*.json is video and is not read.
// Spotify documents every time in these files as UTC. When an export holds both histories, the
// extended one (a superset) is used and the account-data history is left out.
//
// What is kept: the IP address, user agent and username of each play are left out on purpose —
// they describe the device and network, not the listening, and an IP address locates the owner.
// Platform and country are kept (coarse, and what "where did I listen" needs).
//
// spotify.savedTracks and spotify.playlists are snapshots: one item each, dated source.exportedAt.
// spotify.streamingHistory is an event log, split into one item per calendar month (UTC) and
// dated by the month's last play: a lifetime of extended history stays far below the daemon's
// request size limit, and a later export repeats the finished months with the same time and
// content (the daemon answers duplicate), so only the months that grew become new versions.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { byMonth as groupByMonth, isObject, numberedFiles, optional, readJsonOrSkip, streamListOrSkip, text as str } from '../_shared/read.js'

const LIBRARY_FILE = 'YourLibrary.json'
const PLAYLIST_FILES = /(^|\/)Playlists?\d*\.json$/
const ACCOUNT_HISTORY = /(^|\/)StreamingHistory(_music_|_podcast_)?\d+\.json$/
const EXTENDED_HISTORY = /(^|\/)(Streaming_History_Audio_[^/]*|endsong_\d+)\.json$/
const VIDEO_HISTORY = /(^|\/)Streaming_History_Video_[^/]*\.json$/

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readLibrary(source, opts)
    yield * readPlaylists(source, opts)
    yield * readHistory(source, opts)
  }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readLibrary (source, opts) {
  const library = source.find(LIBRARY_FILE)[0]
  if (library === undefined) { opts.note(`no ${LIBRARY_FILE} in this export: nothing for spotify.savedTracks`); return }
  const raw = await readJsonOrSkip(source, library.path, opts)
  if (raw === undefined) return
  const tracks = toSavedTracks(raw)
  if (tracks === null) opts.skip(library.path, 'no "tracks" list in it: nothing for spotify.savedTracks')
  else yield { scope: 'spotify.savedTracks', collectedAt: source.exportedAt, data: { tracks }, label: `${tracks.length} saved tracks` }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readPlaylists (source, opts) {
  const files = numberedFiles(source, PLAYLIST_FILES)
  if (files.length === 0) { opts.note('no Playlist1.json in this export: nothing for spotify.playlists'); return }
  const playlists = []
  let read = 0
  for (const file of files) {
    const raw = await readJsonOrSkip(source, file.path, opts)
    if (raw === undefined) continue
    const list = isObject(raw) && Array.isArray(raw.playlists) ? raw.playlists : undefined
    if (list === undefined) { opts.skip(file.path, 'no "playlists" list in it'); continue }
    read++
    for (const p of list) { const playlist = toPlaylist(p); if (playlist !== null) playlists.push(playlist) }
  }
  if (read === 0) return
  yield { scope: 'spotify.playlists', collectedAt: source.exportedAt, data: { playlists }, label: `${playlists.length} playlists` }
}

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
async function * readHistory (source, opts) {
  for (const video of source.find(VIDEO_HISTORY)) opts.skip(video.path, 'video plays are not part of spotify.streamingHistory')
  const extended = source.find(EXTENDED_HISTORY)
  const account = source.find(ACCOUNT_HISTORY)
  const files = extended.length > 0 ? extended : account
  if (files.length === 0) {
    opts.note('no StreamingHistory*.json or Streaming_History_Audio_*.json in this export: nothing for spotify.streamingHistory')
    return
  }
  if (extended.length > 0 && account.length > 0) {
    opts.note('both the extended and the account-data streaming history are here; using the extended one')
    for (const f of account) opts.skip(f.path, 'the extended streaming history in this export holds these plays too')
  }
  const plays = []
  let skipped = 0
  for (const file of [...files].sort((a, b) => a.path < b.path ? -1 : 1)) {
    for await (const r of streamListOrSkip(source, file.path, opts, 'plays')) {
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

/**
 * Plays grouped by the UTC month they ended in, months and plays in time order (ties keep file order).
 * @template {{endedAt: string}} P
 * @param {P[]} plays
 * @returns {[string, P[]][]}
 */
export function byMonth (plays) { return groupByMonth(plays, (p) => p.endedAt) }

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
 * A playlist: {name, lastModified?, description?, followers?, items}, or null without a name.
 * @param {unknown} p
 */
export function toPlaylist (p) {
  if (!isObject(p)) return null
  const name = str(p.name)
  if (name === undefined) return null
  const items = []
  for (const it of Array.isArray(p.items) ? p.items : []) {
    if (!isObject(it)) continue
    const addedAt = str(it.addedDate)
    const added = optional('addedAt', addedAt !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(addedAt) ? addedAt : undefined)
    if (isObject(it.track) && str(it.track.trackName) !== undefined) {
      items.push({ kind: 'track', track: it.track.trackName, ...optional('artist', str(it.track.artistName)), ...optional('album', str(it.track.albumName)), ...optional('uri', spotifyUri(it.track.trackUri)), ...added })
    } else if (isObject(it.episode) && str(it.episode.episodeName) !== undefined) {
      items.push({ kind: 'episode', episode: it.episode.episodeName, ...optional('show', str(it.episode.showName)), ...optional('uri', spotifyUri(it.episode.episodeUri)), ...added })
    } else if (isObject(it.localTrack) && str(it.localTrack.uri) !== undefined) {
      items.push({ kind: 'local', uri: it.localTrack.uri, ...added })
    }
  }
  const lastModified = str(p.lastModifiedDate)
  const followers = p.numberOfFollowers
  return {
    name,
    ...optional('lastModified', lastModified !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(lastModified) ? lastModified : undefined),
    ...optional('description', str(p.description)),
    ...optional('followers', isCount(followers) ? followers : undefined),
    items
  }
}

/** @param {unknown} v */
function spotifyUri (v) { const s = str(v); return s !== undefined && s.startsWith('spotify:') ? s : undefined }

/**
 * Extended format (Streaming_History_Audio_*, endsong_*). IP address (ip_addr or
 * ip_addr_decrypted), user agent (user_agent_decrypted) and username are deliberately not kept.
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

/** @param {unknown} v @returns {boolean | undefined} */
function bool (v) { return typeof v === 'boolean' ? v : undefined }

/** @param {unknown} v @returns {v is number} */
function isCount (v) { return Number.isInteger(v) && /** @type {number} */ (v) >= 0 }

