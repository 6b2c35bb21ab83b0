import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { position, utc } from '../../plugins/google-maps/convert.js'
import { runImport } from '../../src/connectors/import.js'
import { openExport } from '../../src/connectors/source.js'
import { daemonSubmit } from '../../src/connectors/submit.js'
import type { ConnectorItem } from '../../src/connectors/types.js'
import { isHearthError } from '../../src/errors.js'
import { silentLogger } from '../../src/log.js'
import { startDataServer } from '../support/connectors-daemon.js'
import { tempDir } from '../support/tmp.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { ACTIVITY, androidTimeline, DEVICE_NAME, DEVICE_TAG, EIFFEL, HOME, iosTimeline, LOUVRE, MAC, takeout, VISITS } from './fixtures/google-maps.js'
import { assertItemsValid, readItems, SCHEMAS_DIR, shippedConnector } from './fixtures/run.js'

const POINTS_SCOPE = 'googlemaps.locations'
const WITH = `hearth import google-maps … --with ${POINTS_SCOPE}`

/** The connector's items with the raw points asked for, as `hearth import --with` runs it. */
async function readWithPoints (location: string): Promise<ConnectorItem[]> {
  const connector = await shippedConnector('google-maps')
  const source = await openExport(location)
  const items: ConnectorItem[] = []
  try {
    for await (const item of connector.module.read(source, { note: () => {}, skip: () => {}, logger: silentLogger(), include: new Set([POINTS_SCOPE]) })) items.push(item)
  } finally {
    await source.close()
  }
  return items
}

const TAKEOUT_VISITS = VISITS.map((v) => ({
  start: v.start, end: v.end, place: v.at, placeId: v.placeId,
  ...(v.name !== undefined ? { name: v.name } : {}), ...(v.address !== undefined ? { address: v.address } : {}), ...(v.semanticType !== undefined ? { semanticType: v.semanticType } : {}), confidence: v.confidence
}))
const TAKEOUT_ACTIVITY = { start: ACTIVITY.start, end: ACTIVITY.end, type: 'WALKING', from: EIFFEL, to: LOUVRE, distanceMeters: 3650, confidence: 0.75 }

test('google-maps: Takeout 2019, 2022 and 2024 give visits and activities by month; raw points only when asked for', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('google-maps')
  for (const layout of ['2019', '2022', '2024'] as const) {
    const { zip, folder } = await writeBothExports(dir, `takeout-${layout}`, takeout(layout))
    const r = await readItems(connector, zip)
    assert.deepEqual((await readItems(connector, folder)).items, r.items, `${layout}: the folder reads as the zip`)
    await assertItemsValid(r.items)
    assert.deepEqual(r.items.map((i) => [i.scope, i.data.month, i.collectedAt]), [
      ['googlemaps.visits', '2024-03', '2024-03-02T20:00:00.000Z'],
      ['googlemaps.visits', '2024-04', '2024-04-02T07:30:00.000Z'],
      ['googlemaps.activities', '2024-03', '2024-03-02T18:05:00.000Z']
    ], layout)
    assert.deepEqual(r.items.flatMap((i) => (i.data.visits as unknown[] | undefined) ?? []), TAKEOUT_VISITS, `${layout}: visits with place, name and address`)
    assert.deepEqual(r.items[2]!.data.activities, [TAKEOUT_ACTIVITY])
    assert.deepEqual(r.notes, ['1 timeline entr(y/ies) without a readable time or place left out'])
    const records = r.skipped.find((s) => /(Records|Location History)\.json$/.test(s.path))
    assert.equal(records?.reason, `raw location points, which go to ${POINTS_SCOPE} only when asked for (${WITH})`, `${layout}: Records.json is listed, not read`)
    assert.equal(r.skipped.filter((s) => s.path === records?.path).length, 1)
    if (layout !== '2019') assert.match(r.skipped.find((s) => s.path.endsWith('Settings.json'))!.reason, /devices' names and ids/)

    const withPoints = await readWithPoints(zip)
    await assertItemsValid(withPoints)
    const points = withPoints.filter((i) => i.scope === POINTS_SCOPE)
    assert.deepEqual(points.map((i) => [i.data.month, i.collectedAt, (i.data.points as unknown[]).length]), [['2024-03', '2024-03-02T17:45:00.000Z', 2], ['2024-04', '2024-04-01T19:00:00.000Z', 1]], layout)
    assert.deepEqual((points[0]!.data.points as unknown[])[0], { at: '2024-03-02T08:00:00.000Z', ...EIFFEL, accuracyMeters: 12, altitudeMeters: 35, source: 'GPS' })
    const all = JSON.stringify(withPoints)
    for (const secret of [String(DEVICE_TAG), MAC, DEVICE_NAME, 'STILL']) assert.ok(!all.includes(secret), `${layout}: ${secret} (device id, Wi-Fi MAC, device name, activity guess) is never kept`)
  }
})

test('google-maps: the on-device exports (Android Timeline.json, iOS location-history.json) give the same visits and trips', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('google-maps')
  const android = await readItems(connector, await writeZipExport(dir, 'android.zip', androidTimeline()))
  const ios = await readItems(connector, await writeZipExport(dir, 'ios.zip', iosTimeline()))
  for (const r of [android, ios]) {
    await assertItemsValid(r.items)
    assert.deepEqual(r.items.map((i) => [i.scope, i.data.month, i.collectedAt]), [
      ['googlemaps.visits', '2024-03', '2024-03-02T20:00:00.000Z'],
      ['googlemaps.visits', '2024-04', '2024-04-02T07:30:00.000Z'],
      ['googlemaps.activities', '2024-03', '2024-03-02T18:05:00.000Z']
    ])
    assert.ok(r.notes.includes(`raw positions and timeline paths were left out: ${POINTS_SCOPE} is imported only when asked for (${WITH})`))
    assert.doesNotMatch(JSON.stringify(r.items), /frequentPlaces|"HOME"|aa:bb|STILL/, 'the home/work profile, Wi-Fi scans and activity guesses are left out')
  }
  // local times with their offset become UTC; the offset is kept where Android gives it
  assert.deepEqual((android.items[0]!.data.visits as unknown[])[0], { start: VISITS[0]!.start, end: VISITS[0]!.end, place: EIFFEL, placeId: VISITS[0]!.placeId, semanticType: 'UNKNOWN', confidence: 0.93, utcOffsetMinutes: 60 })
  assert.deepEqual((ios.items[1]!.data.visits as unknown[])[0], { start: VISITS[2]!.start, end: VISITS[2]!.end, place: HOME, placeId: VISITS[2]!.placeId, semanticType: 'TYPE_HOME', confidence: 0.99 })
  assert.deepEqual(ios.items[2]!.data.activities, [{ start: ACTIVITY.start, end: ACTIVITY.end, type: 'walking', from: { lat: 48.85837, lng: 2.294481 }, to: { lat: 48.860611, lng: 2.337644 }, distanceMeters: 3650, confidence: 0.75 }])
  // with the raw points: Android's rawSignals positions and both exports' timeline paths
  const androidPoints = (await readWithPoints(await writeZipExport(dir, 'android2.zip', androidTimeline()))).filter((i) => i.scope === POINTS_SCOPE)
  assert.deepEqual((androidPoints[0]!.data.points as Array<{ at: string; source: string }>).map((p) => [p.at, p.source]), [
    ['2024-03-02T08:00:00.000Z', 'gps'], ['2024-03-02T17:31:00.000Z', 'timelinePath'], ['2024-03-02T17:45:00.000Z', 'wifi'], ['2024-03-02T18:00:00.000Z', 'timelinePath']
  ])
  const iosPoints = (await readWithPoints(await writeZipExport(dir, 'ios2.zip', iosTimeline()))).filter((i) => i.scope === POINTS_SCOPE)
  assert.deepEqual(iosPoints.map((i) => i.data), [{ month: '2024-03', points: [{ at: '2024-03-02T17:31:00.000Z', lat: 48.85837, lng: 2.294481, source: 'timelinePath' }, { at: '2024-03-02T18:00:00.000Z', lat: 48.86, lng: 2.33, source: 'timelinePath' }] }])
})

test('google-maps: broken files are listed and the rest imported; --with imports the points; importing again stores nothing new', async (t) => {
  const dir = await tempDir(t)
  const server = await startDataServer(t, { dir, schemasDir: SCHEMAS_DIR })
  const connector = await shippedConnector('google-maps')
  const files = takeout('2024')
  const folder = 'Takeout/Location History (Timeline)'
  files[`${folder}/Semantic Location History/2024/2024_APRIL.json`] = '{"timelineObjects": [{"placeVisit": '
  files[`${folder}/Records.json`] = JSON.stringify(files[`${folder}/Records.json`]).slice(0, -60)
  const zip = await writeZipExport(dir, 'broken.zip', files)
  const submit = daemonSubmit({ socketPath: server.socketPath })
  await assert.rejects(runImport({ connector, source: zip, submit, include: ['googlemaps.visits'] }),
    (err: unknown) => isHearthError(err, 'INVALID_ARGUMENT') && /not an optional scope of google-maps \(optional: googlemaps\.locations\)/.test((err as Error).message))
  const first = await runImport({ connector, source: zip, submit, include: [POINTS_SCOPE] })
  assert.deepEqual(first.rejected, [])
  assert.deepEqual(first.scopes.map((s) => [s.scope, s.stored]), [['googlemaps.visits', 1], ['googlemaps.activities', 1], [POINTS_SCOPE, 1]])
  const skipped = Object.fromEntries(first.skipped.map((s) => [s.path.replace(`${folder}/`, ''), s.reason]))
  assert.match(skipped['Semantic Location History/2024/2024_APRIL.json']!, /not valid JSON/)
  assert.match(skipped['Records.json']!, /not valid JSON.*\(the 2 record\(s\) before the damage were read\)/)
  assert.ok(!first.skipped.some((s) => /does not know/.test(s.reason)))
  const again = await runImport({ connector, source: zip, submit, include: [POINTS_SCOPE] })
  assert.deepEqual(again.total, { items: 3, stored: 0, duplicate: 3, rejected: 0, waiting: 0 })
  const without = await runImport({ connector, source: zip, submit })
  assert.deepEqual(without.total, { items: 2, stored: 0, duplicate: 2, rejected: 0, waiting: 0 }, 'without --with the points are not read at all')
})

test('google-maps: a month of raw points past 50,000 is split into items; positions and times in every spelling', async (t) => {
  const dir = await tempDir(t)
  const start = Date.parse('2024-05-01T00:00:00Z')
  const locations = Array.from({ length: 50_001 }, (_, i) => ({ latitudeE7: 488_583_701 + (i % 1000), longitudeE7: 22_944_813, accuracy: 10, timestamp: new Date(start + i * 20_000).toISOString() }))
  const items = (await readWithPoints(await writeZipExport(dir, 'big.zip', { 'Takeout/Location History/Records.json': { locations } }))).filter((i) => i.scope === POINTS_SCOPE)
  await assertItemsValid(items)
  assert.deepEqual(items.map((i) => [i.data.month, (i.data.points as unknown[]).length, i.collectedAt]), [
    ['2024-05', 50_000, new Date(start + 49_999 * 20_000).toISOString()],
    ['2024-05', 1, new Date(start + 50_000 * 20_000).toISOString()]
  ])
  assert.deepEqual(position({ latitudeE7: 488583701, longitudeE7: -22944813 }), { lat: 48.8583701, lng: -2.2944813 })
  assert.deepEqual(position('48.8584°, 2.2945°'), { lat: 48.8584, lng: 2.2945 })
  assert.deepEqual(position('geo:-33.856784,151.215297'), { lat: -33.856784, lng: 151.215297 })
  assert.equal(position('geo:95,10'), undefined)
  assert.equal(position({ latitudeE7: 'x', longitudeE7: 1 }), undefined)
  assert.equal(utc('2024-03-02T09:00:00.000+01:00'), '2024-03-02T08:00:00.000Z')
  assert.equal(utc('1709366400000'), '2024-03-02T08:00:00.000Z')
  assert.equal(utc('2024-03-02T09:00:00.123456+01:00'), '2024-03-02T08:00:00.123Z')
  assert.equal(utc('yesterday'), undefined)
})
