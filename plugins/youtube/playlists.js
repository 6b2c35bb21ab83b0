// @ts-check
// YouTube playlists and liked videos from Google Takeout → youtube.playlists and youtube.likes.
//
// Layouts Takeout has shipped (folder "playlists/", file names in the account's language):
//   2024 and later  playlists.csv          Playlist ID,Add new videos to top,Playlist Create Timestamp,
//                                          Playlist Title (Original),…,Playlist Update Timestamp,
//                                          Playlist Video Order,Playlist Visibility
//                   <title>-videos.csv     Video ID,Playlist Video Creation Timestamp
//   2020–2023       <title>.csv            a block: Playlist Id,Channel Id,Time Created,Time Updated,
//                                          Title,Description,Visibility / one row / a blank line /
//                                          Video Id,Time Added / the videos
//   before 2020     <name>.json            YouTube API playlist items:
//                                          [{"snippet": {"title", "publishedAt", "resourceId": {"videoId"}}}]
//                                          (likes.json, favorites.json, watch-later.json, …)
// The liked videos are the playlist with id "LL" (or "LL…"), named "Liked videos" in English
// (likes.json before 2020): they become youtube.likes, every other playlist youtube.playlists.
// Videos are kept as ids with the time they were added; the CSVs hold no video titles.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */
/** @typedef {{videoId: string, addedAt?: string, title?: string}} Video */
/** @typedef {{title: string, id?: string, visibility?: string, description?: string, createdAt?: string, updatedAt?: string, videos: Video[]}} Playlist */

import { isObject, optional, readJsonOrSkip, text } from '../_shared/read.js'
import { readCsvOrSkip, takeoutIsoTime } from './csv.js'

const FOLDER = /(^|\/)playlists\/([^/]+)\.(csv|json)$/
const INDEX = /(^|\/)playlists\/playlists\.csv$/
const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/
const LIKED_NAMES = new Set(['Liked videos', 'likes'])

/** @param {ExportSource} source @param {ReadOptions} opts @returns {AsyncGenerator<ConnectorItem>} */
export async function * readPlaylists (source, opts) {
  const files = source.find(FOLDER).filter((f) => !INDEX.test(f.path))
  if (files.length === 0) { opts.note('no playlists/ in this export: nothing for youtube.playlists or youtube.likes'); return }
  const index = await readIndex(source, opts)
  /** @type {Playlist[]} */
  const playlists = []
  /** @type {Playlist | undefined} */
  let liked
  for (const file of files) {
    const name = /** @type {string} */ (FOLDER.exec(file.path)?.[2])
    const playlist = file.path.endsWith('.json')
      ? await fromApiJson(source, opts, file.path, name)
      : await fromCsv(source, opts, file.path, name, index)
    if (playlist === null) continue
    if (isLiked(playlist, name)) liked = liked === undefined ? playlist : { ...liked, videos: [...liked.videos, ...playlist.videos] }
    else playlists.push(playlist)
  }
  playlists.sort((a, b) => a.title < b.title ? -1 : a.title > b.title ? 1 : 0)
  if (playlists.length > 0) {
    yield { scope: 'youtube.playlists', collectedAt: source.exportedAt, data: { playlists }, label: `${playlists.length} playlists` }
  }
  if (liked !== undefined) {
    const videos = liked.videos.map((v) => ({ videoId: v.videoId, ...optional('likedAt', v.addedAt), ...optional('title', v.title) }))
    yield { scope: 'youtube.likes', collectedAt: source.exportedAt, data: { videos }, label: `${videos.length} liked videos` }
  } else opts.note('no liked videos (the "LL" playlist) in this export: nothing for youtube.likes')
}

/** @param {Playlist} p @param {string} fileName */
function isLiked (p, fileName) {
  return p.id === 'LL' || (p.id !== undefined && /^LL[A-Za-z0-9_-]{20,}$/.test(p.id)) || (p.id === undefined && LIKED_NAMES.has(fileName.replace(/-videos$/, '')))
}

/**
 * playlists.csv (2024 and later): title → the playlist's details, by header name (English) or,
 * in another language, by the known column order.
 * @param {ExportSource} source @param {ReadOptions} opts
 * @returns {Promise<Map<string, Omit<Playlist, 'videos'>>>}
 */
async function readIndex (source, opts) {
  /** @type {Map<string, Omit<Playlist, 'videos'>>} */
  const byTitle = new Map()
  const file = source.find(INDEX)[0]
  if (file === undefined) return byTitle
  const rows = await readCsvOrSkip(source, file.path, opts)
  if (rows === undefined || rows.length === 0) return byTitle
  const header = /** @type {string[]} */ (rows[0]).map((h) => h.trim().toLowerCase())
  /** @param {string} name @param {number} position */
  const col = (name, position) => { const i = header.indexOf(name); return i >= 0 ? i : position }
  const c = {
    id: col('playlist id', 0),
    created: col('playlist create timestamp', 2),
    title: col('playlist title (original)', 3),
    updated: col('playlist update timestamp', 5),
    visibility: col('playlist visibility', 7)
  }
  for (const r of rows.slice(1)) {
    const title = text(r[c.title]?.trim())
    const id = text(r[c.id]?.trim())
    if (title === undefined) continue
    byTitle.set(title, {
      title,
      ...optional('id', id),
      ...optional('visibility', text(r[c.visibility]?.trim())),
      ...optional('createdAt', takeoutIsoTime(r[c.created])),
      ...optional('updatedAt', takeoutIsoTime(r[c.updated]))
    })
  }
  return byTitle
}

/**
 * @param {ExportSource} source @param {ReadOptions} opts @param {string} path @param {string} name
 * @param {Map<string, Omit<Playlist, 'videos'>>} index
 * @returns {Promise<Playlist | null>}
 */
async function fromCsv (source, opts, path, name, index) {
  const rows = await readCsvOrSkip(source, path, opts)
  if (rows === undefined) return null
  const blank = rows.findIndex((r) => r.every((x) => x.trim() === ''))
  if (blank > 0 && (rows[0]?.length ?? 0) >= 5) {
    // 2020–2023: the playlist's own block, a blank line, then the videos under their header row
    const head = /** @type {string[]} */ (rows[0]).map((h) => h.trim().toLowerCase())
    const meta = rows[1] ?? []
    /** @param {string} n @param {number} position */
    const field = (n, position) => { const i = head.indexOf(n); return meta[i >= 0 ? i : position]?.trim() }
    return {
      title: text(field('title', 4)) ?? name,
      ...optional('id', text(field('playlist id', 0))),
      ...optional('visibility', text(field('visibility', 6))),
      ...optional('description', text(field('description', 5))),
      ...optional('createdAt', takeoutIsoTime(field('time created', 2))),
      ...optional('updatedAt', takeoutIsoTime(field('time updated', 3))),
      videos: videosIn(rows.slice(blank + 2))
    }
  }
  // 2024 and later: "<title>-videos.csv", its details in playlists.csv
  const title = name.replace(/-videos$/, '')
  return { ...(index.get(title) ?? { title }), videos: videosIn(rows.slice(1)) }
}

/** @param {string[][]} rows @returns {Video[]} */
function videosIn (rows) {
  const videos = []
  for (const r of rows) {
    const id = r[0]?.trim() ?? ''
    if (VIDEO_ID.test(id)) videos.push({ videoId: id, ...optional('addedAt', takeoutIsoTime(r[1])) })
  }
  return videos
}

/**
 * @param {ExportSource} source @param {ReadOptions} opts @param {string} path @param {string} name
 * @returns {Promise<Playlist | null>}
 */
async function fromApiJson (source, opts, path, name) {
  const raw = await readJsonOrSkip(source, path, opts)
  if (raw === undefined) return null
  if (!Array.isArray(raw)) { opts.skip(path, 'not a list of playlist items'); return null }
  const videos = []
  for (const item of raw) {
    const snippet = isObject(item) && isObject(item.snippet) ? item.snippet : undefined
    const videoId = snippet !== undefined && isObject(snippet.resourceId) ? text(snippet.resourceId.videoId) : undefined
    if (snippet === undefined || videoId === undefined || !VIDEO_ID.test(videoId)) continue
    videos.push({ videoId, ...optional('addedAt', takeoutIsoTime(snippet.publishedAt)), ...optional('title', text(snippet.title)) })
  }
  return { title: name, videos }
}
