// The dashboard against two real daemons of one owner syncing on loopback, in a real browser
// (issue 25, item 9): "Recent imports" lists every import, `hearth import`'s beside the
// dashboard's; the import progress bar is drawn in the dashboard's accent colour, not the
// browser's blue; and Devices shows nothing to send or receive for a device that is in sync.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli, REPO_ROOT, type DaemonProcess } from '../support/daemon.js'
import { openBrowser } from '../support/browser.js'
import { waitFor } from '../support/data-files.js'
import { identityHome, SYNC_ENV, syncAddress, allVersions } from '../support/sync-daemons.js'
import { tempDir } from '../support/tmp.js'
import { writeZipExport } from '../connectors/fixtures/exports.js'
import { accountHistoryFiles, TRACKS, yourLibrary } from '../connectors/fixtures/spotify.js'

// evaluated in the page, not in Node
declare const document: any
declare const getComputedStyle: (e: unknown) => { getPropertyValue: (p: string) => string; accentColor: string }
declare const Image: any

async function loginLink (d: DaemonProcess): Promise<string> {
  const r = await d.request({ method: 'POST', path: '/v1/ui/login-link' })
  assert.equal(r.status, 201, r.body.toString())
  return r.json.url as string
}

async function goTo (page: Page, d: DaemonProcess, route: string): Promise<void> {
  await page.goto(`${/^dashboard (http:\/\/\S+)/m.exec(d.output())![1]!}#/${route}`)
  await page.locator('main h1').waitFor()
}

/** `#rrggbb` or `rgb(r, g, b)` as [r, g, b]. */
function rgb (colour: string): number[] {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour.trim())
  if (hex !== null) return hex.slice(1).map((h) => parseInt(h, 16))
  return /rgba?\((\d+), (\d+), (\d+)/.exec(colour)!.slice(1, 4).map(Number)
}

/** The colour drawn at the middle of an element, read from a screenshot of it (decoded in a blank page). */
async function paintedColour (page: Page, element: Locator): Promise<number[]> {
  const png = (await element.screenshot()).toString('base64')
  const blank = await page.context().newPage()
  try {
    return await blank.evaluate(async (data: string) => {
      const img = new Image()
      img.src = `data:image/png;base64,${data}`
      await img.decode()
      const canvas = document.createElement('canvas')
      canvas.width = img.width
      canvas.height = img.height
      const g = canvas.getContext('2d')
      g.drawImage(img, 0, 0)
      return [...g.getImageData(Math.floor(img.width / 2), Math.floor(img.height / 2), 1, 1).data.slice(0, 3)] as number[]
    }, png)
  } finally {
    await blank.close()
  }
}

test('dashboard: Recent imports lists hearth import\'s imports too; the progress bar is in the accent colour; Devices shows 0 to send once in sync', async (t) => {
  const key = generatePrivateKey()
  const a = await startDaemonProcess(t, { home: await identityHome(t, key), env: SYNC_ENV })
  const b = await startDaemonProcess(t, { home: await identityHome(t, key), env: SYNC_ENV, args: ['--set', `sync.peers=["${syncAddress(a)}"]`] })
  const bPeer = syncAddress(b).split('/p2p/')[1]!
  const browser = await openBrowser(t)
  const { page } = browser
  await page.goto(await loginLink(a))
  await page.getByRole('heading', { name: 'Overview' }).waitFor()

  await t.test('an import run with hearth import is listed beside the dashboard\'s, and the finished bar is painted in the accent colour', async () => {
    const exportDir = await tempDir(t, 'hearth-export-')
    const zip = await writeZipExport(exportDir, 'my_spotify_data.zip', { 'Spotify Account Data/YourLibrary.json': yourLibrary(TRACKS), ...accountHistoryFiles() })
    const cli = await runCli(a.home, ['import', 'spotify', zip, '--json'])
    assert.equal(cli.code, 0, cli.stderr)
    const stored = JSON.parse(cli.stdout).total.stored as number
    assert.ok(stored >= 2)

    await goTo(page, a, 'import')
    const recent = page.locator('.table-wrap[aria-label="Recent imports"]')
    const fromCli = recent.locator('tbody tr', { hasText: 'hearth import' })
    await fromCli.waitFor({ timeout: 30_000 })
    assert.deepEqual(await fromCli.locator('td.num').allTextContents(), [String(stored), '0', '0'])
    assert.match(await fromCli.textContent() ?? '', /my_spotify_data\.zip.*spotify/)

    await page.locator('input[type=file][name=archive]').setInputFiles(zip)
    await page.getByRole('radio', { name: /Spotify/ }).waitFor({ timeout: 120_000 })
    await page.getByRole('button', { name: /^Import with Spotify/ }).click()
    await page.getByText('Import finished').waitFor({ timeout: 180_000 })
    const bar = page.locator('progress.wide')
    assert.equal(await bar.getAttribute('value'), '1')
    const accent = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent'))
    assert.deepEqual(rgb(await bar.evaluate((e) => getComputedStyle(e).accentColor)), rgb(accent), 'the bar takes the dashboard\'s accent')
    const painted = await paintedColour(page, bar)
    const want = rgb(accent)
    assert.ok(painted.every((c, i) => Math.abs(c - want[i]!) <= 24), `the bar is painted ${JSON.stringify(painted)}, not the accent ${JSON.stringify(want)}`)

    const fromDashboard = recent.locator('tbody tr', { hasText: 'dashboard' })
    await fromDashboard.waitFor({ timeout: 30_000 })
    assert.deepEqual(await fromDashboard.locator('td.num').allTextContents(), ['0', String(stored), '0'], 'the same export again: all duplicates')
    assert.equal(await recent.locator('tbody tr').count(), 2)
    await keepScreenshot(await browser.shot('import-recent'), 'import-recent')
  })

  await t.test('devices in sync: nothing to send or receive on either side, and the page says 0', async () => {
    assert.equal((await b.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'from-b' } })).status, 201)
    assert.equal((await a.request({ method: 'POST', path: '/v1/data/github.profile', body: { login: 'from-a', id: 1, created_at: '2020-01-01T00:00:00Z' } })).status, 201)
    const files = async (d: DaemonProcess): Promise<number> => (await allVersions(d, 'instagram.profile')).length + (await allVersions(d, 'github.profile')).length
    await waitFor('both devices hold both files', async () => await files(a) === 2 && await files(b) === 2, 120_000)
    const peerOf = async (d: DaemonProcess, id: string): Promise<any> => ((await d.request({ path: '/v1/peers' })).json.peers as any[]).find((p) => p.peerId === id)
    const aPeer = syncAddress(a).split('/p2p/')[1]!
    // quiet now: both sides know the other has handled everything (no waiting for a periodic round)
    const settled = await waitFor('in sync on both sides', async () => {
      const [onA, onB] = [await peerOf(a, bPeer), await peerOf(b, aPeer)]
      return onA?.pendingOut === 0 && onA?.pendingIn === 0 && onB?.pendingOut === 0 && onB?.pendingIn === 0 ? onA : null
    }, 30_000).catch(async (err: Error) => {
      throw new Error(`${err.message}: A sees ${JSON.stringify(await peerOf(a, bPeer))}, B sees ${JSON.stringify(await peerOf(b, aPeer))}`)
    })
    assert.equal(settled.connected, true)

    await goTo(page, a, 'devices')
    const row = page.locator('.table-wrap[aria-label="Other devices"] tbody tr', { hasText: bPeer.slice(0, 8) })
    await row.getByText('online').waitFor({ timeout: 60_000 })
    assert.equal(await row.locator('td[data-label="To send"]').textContent(), '0')
    assert.equal(await row.locator('td[data-label="To receive"]').textContent(), '0')
    assert.deepEqual(browser.errors, [])
  })
})

async function keepScreenshot (path: string, name: string): Promise<void> {
  if (process.env.HEARTH_UPDATE_SCREENSHOTS !== '1') return
  const dir = join(REPO_ROOT, 'docs', 'screenshots')
  await mkdir(dir, { recursive: true })
  await copyFile(path, join(dir, `${name}.png`))
}
