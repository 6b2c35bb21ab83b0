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
//     Streaming_History_Video_*.json  the same rows for what played as video (music videos,
//                                     video podcasts): real track and episode plays, read too.
// Spotify documents every time in these files as UTC. Both histories may be imported together,
// and they need not cover the same time: an extended history requested a year before the account
// data ends where the account data goes on. They are merged by what each covers: the extended
// rows (more detail) wherever they reach, the account-data rows before and after that range; a
// row found identical in two files (two copies of one export, overlapping exports) counts once.
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

import { byMonth as groupByMonth, isObject, numberedFiles, optional, readJsonOrSkip, skipKnownFiles, streamListOrSkip, text as str } from '../_shared/read.js'

const LIBRARY_FILE = 'YourLibrary.json'
const PLAYLIST_FILES = /(^|\/)Playlists?\d*\.json$/
const ACCOUNT_HISTORY = /(^|\/)StreamingHistory(_music_|_podcast_)?\d+\.json$/
const EXTENDED_HISTORY = /(^|\/)(Streaming_History_(Audio|Video)_[^/]*|endsong_\d+)\.json$/
/** @type {import('../_shared/read.js').KnownFile[]} */
const KNOWN_UNUSED = [
  { pattern: /(^|\/)(Userdata|Identity|Identifiers)\.json$/, reason: 'account details (e-mail, phone, birth date, address): left out' },
  { pattern: /(^|\/)Payments\.json$/, reason: 'payment details: left out' },
  { pattern: /(^|\/)(Inferences|Marquee)\.json$/, reason: 'advertising segments Spotify inferred: left out' },
  { pattern: /(^|\/)CustomerServiceHistory[^/]*\.json$/, reason: 'support tickets and surveys: left out' },
  { pattern: /(^|\/)Spotify Technical Log Information\//, reason: 'app and device logs (device ids, IP addresses): left out' },
  { pattern: /(^|\/)[^/]*\.pdf$/, reason: "the export's own documentation" },
  { pattern: /(^|\/)(SearchQueries|Follow|PlaylistInABottle|YourSoundCapsule|Wrapped\d*|FamilyPlan|DuoNewFamily|Podcast[^/]*)\.json$/, reason: 'not imported yet' }
]

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
    skipKnownFiles(source, opts, KNOWN_UNUSED)
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
  const extended = source.find(EXTENDED_HISTORY)
  const account = source.find(ACCOUNT_HISTORY)
  if (extended.length === 0 && account.length === 0) {
    opts.note('no StreamingHistory*.json or Streaming_History_Audio_*.json in this export: nothing for spotify.streamingHistory')
    return
  }
  let unusable = 0
  /** @param {import('../../src/connectors/types.js').ExportEntry[]} files @param {(r: unknown) => Play | null} convert */
  const readAll = async (files, convert) => {
    /** @type {Play[][]} */
    const perFile = []
    for (const file of [...files].sort((a, b) => a.path < b.path ? -1 : 1)) {
      const plays = []
      for await (const r of streamListOrSkip(source, file.path, opts, 'plays')) {
        const play = convert(r)
        if (play === null) unusable++
        else plays.push(play)
      }
      perFile.push(plays)
    }
    return perFile
  }
  const plays = mergeHistories(await readAll(extended, fromExtended), await readAll(account, fromAccountData), opts)
  if (unusable > 0) opts.note(`${unusable} play(s) without a time, track or episode skipped (e.g. audiobooks, removed content)`)
  for (const [month, monthPlays] of byMonth(plays)) {
    yield {
      scope: 'spotify.streamingHistory',
      collectedAt: /** @type {string} */ (monthPlays.at(-1)?.endedAt),
      data: { month, plays: monthPlays },
      label: `${month}: ${monthPlays.length} plays`
    }
  }
}

/** @typedef {{endedAt: string} & Record<string, unknown>} Play */

/**
 * The plays of both histories, each file's plays given as one list. The extended rows are kept
 * whole; an account-data row is kept only outside the extended history's time range (inside it,
 * the extended history holds the same play with more detail). A row identical to one of an
 * earlier file (the same export given twice, overlapping exports) is dropped; repeats inside one
 * file are real plays and stay.
 * @param {Play[][]} extended @param {Play[][]} account @param {Pick<ReadOptions, 'note'>} opts
 * @returns {Play[]}
 */
export function mergeHistories (extended, account, opts) {
  const fromExtended = dropRepeatsAcrossFiles(extended)
  /** @type {string | undefined} */
  let first
  /** @type {string | undefined} */
  let last
  for (const p of fromExtended) {
    if (first === undefined || p.endedAt < first) first = p.endedAt
    if (last === undefined || p.endedAt > last) last = p.endedAt
  }
  const fromAccount = dropRepeatsAcrossFiles(account)
  if (first === undefined || last === undefined || fromAccount.length === 0) return [...fromExtended, ...fromAccount]
  // account-data times are to the minute: a play in the extended range's first minute is inside it
  const from = `${first.slice(0, 16)}:00Z`
  const until = last
  const outside = fromAccount.filter((p) => p.endedAt < from || p.endedAt > until)
  opts.note(`both streaming histories are here: the extended one covers ${first} to ${last}; ${outside.length} account-data play(s) outside that range added, ${fromAccount.length - outside.length} inside it taken from the extended history`)
  return [...fromExtended, ...outside]
}

/** @param {Play[][]} perFile @returns {Play[]} */
function dropRepeatsAcrossFiles (perFile) {
  /** @type {Map<string, number>} */
  const seenIn = new Map()
  const out = []
  for (const [i, plays] of perFile.entries()) {
    for (const p of plays) {
      const key = JSON.stringify(p)
      const first = seenIn.get(key)
      if (first !== undefined && first !== i) continue
      seenIn.set(key, i)
      out.push(p)
    }
  }
  return out
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

