// @ts-check
// Google Maps Timeline / Location History → googlemaps.visits, googlemaps.activities and, only
// when asked for (`hearth import google-maps … --with googlemaps.locations`), googlemaps.locations.
//
// Layouts read (files found by name under any folder; convert.js has the shapes):
//   Takeout, 2019–2024  "Location History/Semantic Location History/<year>/<year>_<MONTH>.json"
//                       (visits and activity segments), "Location History/Records.json" (raw
//                       positions; "Location History.json" before 2019), "Settings.json"
//   Takeout, 2023–2024  the same under "Location History (Timeline)/"
//   On-device, 2024–    "Timeline.json" exported by Maps on Android (semanticSegments, rawSignals,
//                       userLocationProfile) and "location-history.json" on iOS (a list of
//                       visit / activity / timelinePath entries with "geo:" positions)
// Every file is streamed.
//
// Visits and activities are event logs: one item per calendar month (UTC) of their start, dated by
// the month's last end. Raw positions are the most sensitive data here and the largest (a point a
// minute for years): their own optional scope, never imported unless named, and bounded — one item
// per month, split past 50,000 points, at most 200,000 held in memory. Device ids (deviceTag), Wi-Fi
// scans (access points' MAC addresses), activity guesses and the "home"/"work" profile are never kept.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */
/** @typedef {import('./convert.js').Visit} Visit */
/** @typedef {import('./convert.js').Activity} Activity */
/** @typedef {import('./convert.js').Point} Point */

import { monthGrouper, skipKnownFiles, streamJsonOrSkip } from '../_shared/read.js'
import { fromSegment, fromTimelineObject, toPoint } from './convert.js'
import { KNOWN_FILES } from './known-files.js'

export const POINTS = 'googlemaps.locations'
const SEMANTIC_FILE = /(^|\/)Semantic Location History\/\d{4}\/\d{4}_[A-Z]+\.json$/
const RECORDS_FILE = /(^|\/)(Records|Location History)\.json$/
const ANDROID_FILE = /(^|\/)Timeline\.json$/
const IOS_FILE = /(^|\/)location-history\.json$/
const MAX_HELD = 20_000
const MAX_HELD_POINTS = 200_000
export const POINTS_PER_ITEM = 50_000
const WITH = `hearth import google-maps … --with ${POINTS}`

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    const wantPoints = opts.include?.has(POINTS) === true
    const files = {
      semantic: source.find(SEMANTIC_FILE).sort((a, b) => a.path < b.path ? -1 : 1),
      records: source.find(RECORDS_FILE),
      android: source.find(ANDROID_FILE),
      ios: source.find(IOS_FILE)
    }
    if (files.semantic.length + files.android.length + files.ios.length === 0) {
      opts.note('no Semantic Location History, Timeline.json or location-history.json in this export: nothing for googlemaps.visits and googlemaps.activities')
    }
    const out = new Grouped(wantPoints)
    const sources = [
      ...files.semantic.map((f) => /** @type {const} */ ([f.path, '$.timelineObjects.*', fromTimelineObject])),
      ...files.android.map((f) => /** @type {const} */ ([f.path, '$.semanticSegments.*', fromSegment])),
      ...files.ios.map((f) => /** @type {const} */ ([f.path, '$.*', fromSegment]))
    ]
    for (const [path, records, convert] of sources) {
      for await (const raw of streamJsonOrSkip(source, path, opts, { paths: [records] })) yield * out.add(convert(raw))
    }
    if (wantPoints) {
      for (const f of files.records) for await (const raw of streamJsonOrSkip(source, f.path, opts, { paths: ['$.locations.*'] })) yield * out.add({ point: toPoint(raw) })
      for (const f of files.android) for await (const raw of streamJsonOrSkip(source, f.path, opts, { paths: ['$.rawSignals.*'] })) yield * out.add({ point: toPoint(raw) })
    } else {
      for (const f of files.records) opts.skip(f.path, `raw location points, which go to ${POINTS} only when asked for (${WITH})`)
      if (files.android.length > 0 || files.ios.length > 0) opts.note(`raw positions and timeline paths were left out: ${POINTS} is imported only when asked for (${WITH})`)
    }
    yield * out.end()
    if (out.unusable > 0) opts.note(`${out.unusable} timeline entr(y/ies) without a readable time or place left out`)
    skipKnownFiles(source, opts, KNOWN_FILES)
  }
}

/** Visits, activities and points grouped by month as they come, each visit and activity once. */
class Grouped {
  /** @param {boolean} wantPoints */
  constructor (wantPoints) {
    this.wantPoints = wantPoints
    this.unusable = 0
    /** @type {Set<string>} */
    this.seen = new Set()
    this.visits = monthGrouper((/** @type {Visit} */ v) => v.start, MAX_HELD)
    this.activities = monthGrouper((/** @type {Activity} */ a) => a.start, MAX_HELD)
    this.points = monthGrouper((/** @type {Point} */ p) => p.at, MAX_HELD_POINTS)
  }

  /**
   * @param {{visit: Visit} | {activity: Activity} | {path: Point[]} | {point: Point | null} | null} r
   * @returns {ConnectorItem[]}
   */
  add (r) {
    if (r === null || ('point' in r && r.point === null)) { this.unusable++; return [] }
    if ('visit' in r) return this.once(r.visit) ? this.items('googlemaps.visits', 'visits', this.visits.add(r.visit)) : []
    if ('activity' in r) return this.once(r.activity) ? this.items('googlemaps.activities', 'activities', this.activities.add(r.activity)) : []
    if (!this.wantPoints) return []
    const points = 'path' in r ? r.path : [/** @type {Point} */ (r.point)]
    return points.flatMap((p) => this.pointItems(this.points.add(p)))
  }

  /** @returns {ConnectorItem[]} */
  end () {
    return [
      ...this.items('googlemaps.visits', 'visits', this.visits.end()),
      ...this.items('googlemaps.activities', 'activities', this.activities.end()),
      ...this.pointItems(this.points.end())
    ]
  }

  /** Takeout and the on-device export may both be given: a visit or activity is kept once. @param {Visit | Activity} v */
  once (v) {
    const key = `${'type' in v ? v.type : 'visit'}|${v.start}|${v.end}`
    if (this.seen.has(key)) return false
    this.seen.add(key)
    return true
  }

  /**
   * @param {string} scope @param {string} key @param {[string, Array<Visit | Activity>][]} months
   * @returns {ConnectorItem[]}
   */
  items (scope, key, months) {
    return months.map(([month, list]) => ({
      scope,
      collectedAt: list.reduce((latest, x) => x.end > latest ? x.end : latest, /** @type {string} */ (list[0]?.end)),
      data: { month, [key]: list },
      label: `${month}: ${list.length} ${key}`
    }))
  }

  /** @param {[string, Point[]][]} months @returns {ConnectorItem[]} */
  pointItems (months) {
    return months.flatMap(([month, list]) => Array.from({ length: Math.ceil(list.length / POINTS_PER_ITEM) }, (_, i) => {
      const points = list.slice(i * POINTS_PER_ITEM, (i + 1) * POINTS_PER_ITEM)
      return { scope: POINTS, collectedAt: /** @type {string} */ (points.at(-1)?.at), data: { month, points }, label: `${month}: ${points.length} points` }
    }))
  }
}
