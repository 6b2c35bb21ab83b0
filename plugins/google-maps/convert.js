// @ts-check
// Google Maps Timeline / Location History records → Hearth's visits, activities and points. Pure.
//
// Takeout "Semantic Location History/<year>/<year>_<MONTH>.json": {"timelineObjects": [
//   {"placeVisit": {"location": {"latitudeE7", "longitudeE7", "placeId", "address", "name",
//      "semanticType"?, "sourceInfo": {"deviceTag"}}, "duration": {"startTimestamp", "endTimestamp"}
//      (before 2022: "startTimestampMs"/"endTimestampMs"), "placeConfidence", "visitConfidence", …}},
//   {"activitySegment": {"startLocation": {"latitudeE7", "longitudeE7"}, "endLocation": {…},
//      "duration": {…}, "distance", "activityType", "confidence", "waypointPath"?, …}}]}
// Takeout "Records.json" (older "Location History.json"): {"locations": [{"latitudeE7",
//   "longitudeE7", "accuracy", "altitude"?, "verticalAccuracy"?, "velocity"?, "heading"?, "source",
//   "timestamp" (before 2022: "timestampMs"), "deviceTag", "activity"?, "activeWifiScan"?, …}]}
// On-device export, Android "Timeline.json": {"semanticSegments": [{"startTime", "endTime" (ISO with
//   offset), "startTimeTimezoneUtcOffsetMinutes"?, "visit"?: {"topCandidate": {"placeId",
//   "semanticType", "probability", "placeLocation": {"latLng": "48.8584°, 2.2945°"}}},
//   "activity"?: {"start": {"latLng"}, "end": {"latLng"}, "distanceMeters", "topCandidate": {"type",
//   "probability"}}, "timelinePath"?: [{"point", "time"}]}], "rawSignals": [{"position": {"LatLng",
//   "accuracyMeters", "altitudeMeters", "source", "timestamp", "speedMetersPerSecond"}} | {"wifiScan"}
//   | {"activityRecord"}], "userLocationProfile": {…}}
// On-device export, iOS "location-history.json": [{"startTime", "endTime", "visit": {"topCandidate":
//   {"placeID", "semanticType", "probability", "placeLocation": "geo:48.858400,2.294500"}} |
//   "activity": {"start": "geo:…", "end": "geo:…", "distanceMeters": "812.0", "topCandidate": {"type"}}
//   | "timelinePath": [{"point": "geo:…", "durationMinutesOffsetFromStartTime": "12"}]}]
// Device ids (deviceTag), Wi-Fi scans (access points' MAC addresses) and activity guesses are never kept.
import { isObject, optional, text } from '../_shared/read.js'

/** @typedef {{lat: number, lng: number}} LatLng */
/** @typedef {{start: string, end: string, place: LatLng, placeId?: string, name?: string, address?: string, semanticType?: string, confidence?: number, utcOffsetMinutes?: number}} Visit */
/** @typedef {{start: string, end: string, type: string, from?: LatLng, to?: LatLng, distanceMeters?: number, confidence?: number, utcOffsetMinutes?: number}} Activity */
/** @typedef {{at: string, lat: number, lng: number, accuracyMeters?: number, altitudeMeters?: number, speedMetersPerSecond?: number, source?: string}} Point */

/** @param {unknown} v @returns {number | undefined} a finite number, also from a numeric string */
function num (v) {
  const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined
}

/** @param {number | undefined} lat @param {number | undefined} lng @returns {LatLng | undefined} */
function latLng (lat, lng) {
  if (lat === undefined || lng === undefined || Math.abs(lat) > 90 || Math.abs(lng) > 180) return undefined
  return { lat: Math.round(lat * 1e7) / 1e7, lng: Math.round(lng * 1e7) / 1e7 }
}

/**
 * A position in any of Google's spellings: {latitudeE7, longitudeE7}, {latE7, lngE7},
 * "48.8584°, 2.2945°", "geo:48.858400,2.294500", or {latLng | LatLng: one of those strings}.
 * @param {unknown} v @returns {LatLng | undefined}
 */
export function position (v) {
  if (typeof v === 'string') {
    const m = /^(?:geo:)?\s*(-?\d{1,3}(?:\.\d+)?)°?\s*,\s*(-?\d{1,3}(?:\.\d+)?)°?\s*$/.exec(v.trim())
    return m === null ? undefined : latLng(Number(m[1]), Number(m[2]))
  }
  if (!isObject(v)) return undefined
  if (v.latLng !== undefined || v.LatLng !== undefined) return position(v.latLng ?? v.LatLng)
  const lat = num(v.latitudeE7 ?? v.latE7)
  const lng = num(v.longitudeE7 ?? v.lngE7)
  return lat === undefined || lng === undefined ? undefined : latLng(lat / 1e7, lng / 1e7)
}

/**
 * ISO 8601 with any offset, or milliseconds since 1970 as a string (before 2022) → ISO UTC.
 * @param {unknown} v @returns {string | undefined}
 */
export function utc (v) {
  if (typeof v === 'string' && /^\d{10,14}$/.test(v)) return new Date(Number(v)).toISOString()
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)) return undefined
  const ms = Date.parse(v.replace(/(\.\d{3})\d+/, '$1'))
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** @param {unknown} v @returns {number | undefined} a probability 0–1, or Google's confidence names */
function confidence (v) {
  const named = { LOW: 0.25, MEDIUM: 0.5, HIGH: 0.75 }
  const n = typeof v === 'string' && v in named ? named[/** @type {'LOW'} */ (v)] : num(v)
  return n !== undefined && n >= 0 && n <= 1 ? n : undefined
}

/** @param {unknown} v @returns {number | undefined} */
function offsetMinutes (v) { const n = num(v); return n !== undefined && Number.isInteger(n) && Math.abs(n) <= 18 * 60 ? n : undefined }

/** @param {unknown} v @returns {number | undefined} */
function nonNegative (v) { const n = num(v); return n !== undefined && n >= 0 ? n : undefined }

/**
 * One entry of a Takeout semantic file's timelineObjects → a visit, an activity, or null.
 * @param {unknown} raw @returns {{visit: Visit} | {activity: Activity} | null}
 */
export function fromTimelineObject (raw) {
  if (!isObject(raw)) return null
  const item = isObject(raw.placeVisit) ? raw.placeVisit : isObject(raw.activitySegment) ? raw.activitySegment : undefined
  const d = isObject(item?.duration) ? item.duration : {}
  const start = utc(d.startTimestamp ?? d.startTimestampMs)
  const end = utc(d.endTimestamp ?? d.endTimestampMs)
  if (item === undefined || start === undefined || end === undefined) return null
  if (raw.placeVisit !== undefined) {
    const loc = isObject(item.location) ? item.location : {}
    const place = position(loc)
    if (place === undefined) return null
    return {
      visit: {
        start, end, place,
        ...optional('placeId', text(loc.placeId)),
        ...optional('name', text(loc.name)),
        ...optional('address', text(loc.address)),
        ...optional('semanticType', text(loc.semanticType)),
        ...optional('confidence', confidence(item.visitConfidence) ?? confidence((num(item.visitConfidence) ?? NaN) / 100)) // Takeout: a percentage
      }
    }
  }
  return {
    activity: {
      start, end,
      type: text(item.activityType) ?? 'UNKNOWN_ACTIVITY_TYPE',
      ...optional('from', position(item.startLocation)),
      ...optional('to', position(item.endLocation)),
      ...optional('distanceMeters', nonNegative(item.distance)),
      ...optional('confidence', confidence(item.confidence))
    }
  }
}

/**
 * One segment of an on-device export (Android semanticSegments, or an iOS list entry) → a visit,
 * an activity, the timeline path's points, or null.
 * @param {unknown} raw
 * @returns {{visit: Visit} | {activity: Activity} | {path: Point[]} | null}
 */
export function fromSegment (raw) {
  if (!isObject(raw)) return null
  const start = utc(raw.startTime)
  const end = utc(raw.endTime)
  if (start === undefined || end === undefined) return null
  const offset = optional('utcOffsetMinutes', offsetMinutes(raw.startTimeTimezoneUtcOffsetMinutes))
  if (isObject(raw.visit)) {
    const top = isObject(raw.visit.topCandidate) ? raw.visit.topCandidate : {}
    const place = position(top.placeLocation)
    if (place === undefined) return null
    return {
      visit: {
        start, end, place,
        ...optional('placeId', text(top.placeId ?? top.placeID)),
        ...optional('semanticType', text(top.semanticType)),
        ...optional('confidence', confidence(top.probability ?? raw.visit.probability)),
        ...offset
      }
    }
  }
  if (isObject(raw.activity)) {
    const a = raw.activity
    const top = isObject(a.topCandidate) ? a.topCandidate : {}
    return {
      activity: {
        start, end,
        type: text(top.type) ?? 'unknown',
        ...optional('from', position(a.start)),
        ...optional('to', position(a.end)),
        ...optional('distanceMeters', nonNegative(a.distanceMeters)),
        ...optional('confidence', confidence(top.probability ?? a.probability)),
        ...offset
      }
    }
  }
  if (Array.isArray(raw.timelinePath)) {
    const path = raw.timelinePath.flatMap((p) => {
      if (!isObject(p)) return []
      const place = position(p.point)
      const minutes = num(p.durationMinutesOffsetFromStartTime)
      const at = utc(p.time) ?? (minutes !== undefined ? new Date(Date.parse(start) + minutes * 60_000).toISOString() : undefined)
      return place === undefined || at === undefined ? [] : [{ at, ...place, source: 'timelinePath' }]
    })
    return { path }
  }
  return null
}

/**
 * One raw position: a Takeout Records.json location or an on-device rawSignals position; null
 * for anything else (Wi-Fi scans, activity guesses) and for a record without time or place.
 * @param {unknown} raw @returns {Point | null}
 */
export function toPoint (raw) {
  const r = isObject(raw) && isObject(raw.position) ? raw.position : raw
  if (!isObject(r)) return null
  const at = utc(r.timestamp ?? r.timestampMs)
  const place = position(r)
  if (at === undefined || place === undefined) return null
  return {
    at, ...place,
    ...optional('accuracyMeters', nonNegative(r.accuracy ?? r.accuracyMeters)),
    ...optional('altitudeMeters', num(r.altitude ?? r.altitudeMeters)),
    ...optional('speedMetersPerSecond', nonNegative(r.speedMetersPerSecond ?? r.velocity)),
    ...optional('source', text(r.source))
  }
}
