// The owner's dashboard against a real daemon, in a real browser (Debian chromium driven by
// playwright-core): login through a one-time link, each page doing its job, and the refusals
// (no session, foreign Host, foreign Origin). Every page test saves a screenshot in its temp
// folder; with HEARTH_UPDATE_SCREENSHOTS=1 they are also copied to docs/screenshots/.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest, createServer } from 'node:http'
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli, REPO_ROOT, type DaemonProcess } from '../support/daemon.js'
import { openBrowser, type TestBrowser } from '../support/browser.js'
import { tempDir } from '../support/tmp.js'
import { writeZipExport } from '../connectors/fixtures/exports.js'
import { accountHistoryFiles, TRACKS, yourLibrary } from '../connectors/fixtures/spotify.js'
import { createIdentity } from '../../src/identity/index.js'
import { startUpstreamSim } from '../support/upstream-sim.js'
import { homeLayout } from '../../src/home.js'

// evaluated in the page, not in Node
declare const document: { activeElement: { textContent: string | null; tagName: string } | null; documentElement: { scrollWidth: number; clientWidth: number; scrollHeight: number } }
declare const window: unknown

const SYNC_ENV = { HEARTH_SYNC: 'true', HEARTH_MDNS: 'false', HEARTH_SYNC_LISTEN: '/ip4/127.0.0.1/tcp/0' }

async function loginLink (d: DaemonProcess): Promise<string> {
  const r = await d.request({ method: 'POST', path: '/v1/ui/login-link' })
  assert.equal(r.status, 201, r.body.toString())
  return r.json.url as string
}

function dashboardUrl (d: DaemonProcess): string {
  return /^dashboard (http:\/\/\S+)/m.exec(d.output())![1]!
}

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: string; json: any }

/** A request with any Host/Origin/Cookie (fetch would not let a test forge Host). */
async function raw (base: string, path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  const u = new URL(base)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: { host: u.host, ...opts.headers } }, (res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += c.toString() })
      res.on('end', () => {
        let json: any
        try { json = JSON.parse(body) } catch { json = undefined }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json })
      })
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

async function keepScreenshot (path: string, name: string): Promise<void> {
  if (process.env.HEARTH_UPDATE_SCREENSHOTS !== '1') return
  const dir = join(REPO_ROOT, 'docs', 'screenshots')
  await mkdir(dir, { recursive: true })
  await copyFile(path, join(dir, `${name}.png`))
}

async function pageShot (b: TestBrowser, name: string, page: Page = b.page): Promise<void> {
  await keepScreenshot(await b.shot(name, page), name)
}

/** A screenshot of part of the page (the phone's header and tab bar). */
async function clip (b: TestBrowser, name: string, area: { x: number; y: number; width: number; height: number }): Promise<string> {
  const path = join(b.shotsDir, `${name}.png`)
  await b.page.screenshot({ path, clip: area })
  return path
}

async function goTo (page: Page, base: string, route: string): Promise<void> {
  await page.goto(`${base}#/${route}`)
  await page.locator('main h1').waitFor()
}

test('no session, a used link, a foreign Host or Origin: refused; the one-time link sets an HttpOnly SameSite=Strict cookie', async (t) => {
  const d = await startDaemonProcess(t)
  const base = dashboardUrl(d)
  const port = new URL(base).port

  const page = await raw(base, '/')
  assert.equal(page.status, 401)
  assert.match(page.body, /hearth ui/)
  for (const path of ['/v1/status', '/assets/app.js', '/assets/vendor/preact.mjs', '/health']) {
    const r = await raw(base, path)
    assert.equal(r.status, 401, path)
    assert.equal(r.json.error.errorCode, 'UI_SESSION_REQUIRED', path)
  }
  assert.equal((await raw(base, '/login?token=not-a-token')).status, 401)

  // `hearth ui` prints a link (no desktop here: nothing is opened)
  const printed = await runCli(d.home, ['ui', '--no-open'])
  assert.equal(printed.code, 0, printed.stderr)
  assert.match(printed.stdout, new RegExp(`^${base}login\\?token=[A-Za-z0-9_-]{43}\n$`))
  assert.match(printed.stderr, /logs you in once and expires at /)

  const link = await loginLink(d)
  const first = await raw(base, new URL(link).pathname + new URL(link).search)
  assert.equal(first.status, 303)
  assert.equal(first.headers.location, '/')
  const setCookie = String(first.headers['set-cookie'])
  assert.match(setCookie, new RegExp(`^hearth_session_${port}=[A-Za-z0-9_-]{43};`))
  assert.match(setCookie, /; HttpOnly/)
  assert.match(setCookie, /; SameSite=Strict/)
  assert.match(setCookie, /; Path=\//)
  const cookie = setCookie.split(';')[0]!
  const again = await raw(base, new URL(link).pathname + new URL(link).search)
  assert.equal(again.status, 401, 'a login link works once')

  const ok = await raw(base, '/v1/status', { headers: { cookie } })
  assert.equal(ok.status, 200)
  assert.equal(ok.json.dashboard.listening, true)
  assert.equal(ok.headers['x-frame-options'], 'DENY')
  assert.match(String(ok.headers['content-security-policy']), /default-src 'none'/)
  assert.equal((await raw(base, '/v1/status', { headers: { cookie, host: `localhost:${port}` } })).status, 200)

  // DNS rebinding: a page served under another name reaches the port with its own Host
  for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`, `192.168.1.10:${port}`]) {
    const r = await raw(base, '/v1/status', { headers: { cookie, host } })
    assert.equal(r.status, 403, host)
    assert.equal(r.json.error.errorCode, 'HOST_NOT_ALLOWED', host)
  }

  // CSRF: a state change needs the dashboard's own Origin, even with the session
  const body = JSON.stringify({ multiaddr: '/ip4/127.0.0.1/tcp/1' })
  const json = { cookie, 'content-type': 'application/json' }
  for (const headers of [json, { ...json, origin: 'http://evil.example' }, { ...json, origin: 'null' }, { ...json, origin: `http://127.0.0.1:${Number(port) + 1}` }]) {
    const r = await raw(base, '/v1/peers', { method: 'POST', headers, body })
    assert.equal(r.status, 403, JSON.stringify(headers))
    assert.equal(r.json.error.errorCode, 'ORIGIN_NOT_ALLOWED')
  }
  const foreignRead = await raw(base, '/v1/status', { headers: { cookie, origin: 'http://evil.example' } })
  assert.equal(foreignRead.json.error.errorCode, 'ORIGIN_NOT_ALLOWED')
  const same = await raw(base, '/v1/peers', { method: 'POST', headers: { ...json, origin: `http://127.0.0.1:${port}` }, body })
  assert.equal(same.json?.error?.errorCode, 'CONFLICT', 'past the guard: sync is off in this daemon')

  // a session does not mint more login links; the owner socket does
  const mint = await raw(base, '/v1/ui/login-link', { method: 'POST', headers: { cookie, origin: `http://127.0.0.1:${port}` } })
  assert.equal(mint.status, 403)

  // a page on another loopback port is same-site (the cookie goes along) but not same-origin
  const b = await openBrowser(t)
  await b.page.goto(await loginLink(d))
  await b.page.locator('main h1').waitFor()
  const cookies = await b.context.cookies(base)
  assert.equal(cookies.length, 1)
  assert.equal(cookies[0]!.httpOnly, true)
  assert.equal(cookies[0]!.sameSite, 'Strict')
  const attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><script>
      window.results = Promise.all([
        fetch(${JSON.stringify(`${base}logout`)}, { method: 'POST', mode: 'no-cors', credentials: 'include' }).then(() => 'answered', () => 'withheld'),
        fetch(${JSON.stringify(`${base}v1/status`)}, { credentials: 'include' }).then((r) => r.status, (e) => 'blocked')
      ])</script>`)
  })
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
  t.after(() => { attacker.close() })
  const evil = await b.context.newPage()
  await evil.goto(`http://127.0.0.1:${(attacker.address() as { port: number }).port}/`)
  const results = await evil.evaluate(async () => await (window as { results: Promise<unknown[]> }).results)
  // the forged POST goes out (its answer is withheld from the page: no CORS, CORP same-origin);
  // the cross-origin read gets nothing
  assert.equal(results[1], 'blocked')
  await evil.close()
  // the forged logout was refused: the browser's session still works
  await b.page.reload()
  await b.page.getByRole('heading', { name: 'Files', exact: true }).waitFor()

  // logging out ends the session for good
  const out = await raw(base, '/logout', { method: 'POST', headers: { cookie, origin: `http://127.0.0.1:${port}` } })
  assert.equal(out.status, 204)
  assert.equal((await raw(base, '/v1/status', { headers: { cookie } })).status, 401)
  assert.deepEqual(b.errors.filter((e) => !e.includes('from origin \'http://127.0.0.1:') || !e.includes('blocked by CORS policy')), [], 'only the attacker page saw errors')
})

test('the dashboard pages against a real daemon: overview, import, data, devices, schemas, images, settings', async (t) => {
  const key = generatePrivateKey()
  const homeOf = async (): Promise<string> => {
    const root = await tempDir(t, 'hearth-home-')
    await createIdentity(homeLayout(root), { privateKey: key })
    return root
  }
  const d = await startDaemonProcess(t, { home: await homeOf(), env: SYNC_ENV })
  const base = dashboardUrl(d)
  const b = await openBrowser(t)
  const { page } = b

  await t.test('log in through the one-time link and see the overview update by itself', async () => {
    await page.goto(await loginLink(d))
    assert.equal(new URL(page.url()).pathname, '/')
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await page.getByRole('heading', { name: 'Files', exact: true }).waitFor()
    const total = page.locator('.count', { hasText: 'total files' }).locator('.n')
    assert.equal(await total.textContent(), '0')
    // a file written over the socket shows up without a reload
    const r = await d.request({ method: 'POST', path: '/v1/data/spotify.savedTracks?collectedAt=2024-01-01T00:00:00Z', body: { tracks: TRACKS.slice(0, 1) } })
    assert.equal(r.status, 201, r.body.toString())
    await page.locator('.count', { hasText: 'total files' }).locator('.n', { hasText: '1' }).waitFor({ timeout: 30_000 })
    await pageShot(b, 'overview')
  })

  await t.test('keyboard: the page list is reachable with Tab and opens with Enter', async () => {
    await page.locator('body').focus()
    let found = false
    for (let i = 0; i < 12 && !found; i++) {
      await page.keyboard.press('Tab')
      found = await page.evaluate(() => document.activeElement?.textContent === 'Data')
    }
    assert.ok(found, 'the Data link takes keyboard focus')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Data', level: 1 }).waitFor()
    // the heading renders a moment before the page gives it focus: wait for that, bounded
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1', undefined, { timeout: 5000 }).catch(() => {})
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', 'focus moves to the new page\'s heading')
  })

  const exportDir = await tempDir(t, 'hearth-export-')
  const zip = await writeZipExport(exportDir, 'my_spotify_data.zip', {
    'Spotify Account Data/YourLibrary.json': yourLibrary(TRACKS),
    ...accountHistoryFiles()
  })

  await t.test('import an export through the file picker: connector suggested, progress to the end, result table', async () => {
    await goTo(page, base, 'import')
    // not an archive: the error says so, and nothing is left behind
    const junk = join(exportDir, 'not-really.zip')
    await writeFile(junk, 'this is not a zip file')
    await page.locator('input[type=file][name=archive]').setInputFiles(junk)
    await page.getByText(/Import failed \(EXPORT_UNREADABLE\)/).waitFor({ timeout: 120_000 })
    await page.getByRole('button', { name: 'Import another' }).click()
    await page.locator('input[type=file][name=archive]').setInputFiles(zip)
    const spotify = page.getByRole('radio', { name: /Spotify/ })
    await spotify.waitFor({ timeout: 120_000 })
    assert.equal(await spotify.isChecked(), true, 'the connector that fits is preselected')
    assert.equal(await page.locator('label.radio', { hasText: 'Spotify' }).getByText('fits this export').count(), 1)
    await page.getByRole('button', { name: /^Import with Spotify/ }).click()
    await page.getByText('Import finished').waitFor({ timeout: 180_000 })
    assert.equal(await page.locator('progress.wide').getAttribute('value'), '1')
    const rows = page.getByRole('region', { name: 'Import result by scope' }).locator('tbody tr')
    const saved = rows.filter({ hasText: 'spotify.savedTracks' })
    assert.deepEqual(await saved.locator('td.num').allTextContents(), ['1', '0', '0', '0'])
    const history = rows.filter({ hasText: 'spotify.streamingHistory' })
    assert.ok(Number(await history.locator('td.num').first().textContent()) >= 1)
    await pageShot(b, 'import')
    const versions = await d.request({ path: '/v1/data/spotify.streamingHistory/versions' })
    assert.ok(versions.json.total >= 1)
  })

  await t.test('open a version: decrypted fields, raw JSON, download; delete a scope after a confirmation', async () => {
    await goTo(page, base, 'data')
    await page.getByRole('link', { name: 'spotify.savedTracks' }).click()
    await page.getByRole('heading', { name: 'Versions of spotify.savedTracks' }).waitFor()
    const links = page.getByRole('region', { name: 'Versions of spotify.savedTracks' }).locator('tbody tr a')
    // the heading renders before the versions arrive: wait for the rows, then count them
    await links.nth(1).waitFor()
    assert.equal(await links.count(), 2, 'the version from the socket and the one from the import')
    await pageShot(b, 'data-versions')
    await links.first().click()
    await page.getByText('Sigur Rós').waitFor()
    await page.getByText('Untitled #1 🌌').waitFor()
    await pageShot(b, 'data-version')
    await page.getByRole('button', { name: 'Raw JSON' }).click()
    const rawJson = JSON.parse(await page.getByLabel('Raw JSON').textContent() ?? '')
    assert.equal(rawJson.scope, 'spotify.savedTracks')
    assert.deepEqual(rawJson.data.tracks, TRACKS)
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()])
    assert.deepEqual(JSON.parse(await readFile((await file.path())!, 'utf8')).data.tracks, TRACKS)

    await goTo(page, base, 'data/spotify.streamingHistory')
    await page.getByRole('button', { name: 'Delete scope…' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByText('Your other devices delete it too').waitFor()
    await dialog.getByRole('button', { name: 'Delete everywhere' }).click()
    await page.getByRole('heading', { name: 'Scopes' }).waitFor()
    const left = await d.request({ path: '/v1/data/spotify.streamingHistory/versions' })
    assert.equal(left.json.total, 0)
  })

  await t.test('a ChatGPT conversation: the current branch by default, every branch on request, sources as links; a 1.0.0 file shown whole', async () => {
    const conversation = {
      id: 'conv-ui', title: 'Bread', currentMessage: 'a2',
      messages: [
        { id: 'q1', role: 'user', text: 'How long to proof?', contentType: 'text' },
        { id: 'a1', parent: 'q1', role: 'assistant', text: 'An hour (regenerated away).', contentType: 'text' },
        { id: 'a2', parent: 'q1', role: 'assistant', text: 'Until doubled, about two hours.', contentType: 'text', sources: [{ url: 'https://bread.example/proof', title: 'Proofing guide' }], citations: [{ at: 30, sources: [0] }] }
      ]
    }
    const posted = await d.request({ method: 'POST', path: '/v1/data/chatgpt.conversations?collectedAt=2024-02-01T00:00:00Z', body: conversation })
    assert.equal(posted.status, 201, JSON.stringify(posted.json))
    const old = await d.request({ method: 'POST', path: '/v1/data/chatgpt.conversations?collectedAt=2023-02-01T00:00:00Z', body: { id: 'conv-old', title: 'Old', messages: [{ id: 'm1', role: 'user', text: 'an old question', contentType: 'text' }] } })
    assert.equal(old.status, 201, JSON.stringify(old.json))
    await goTo(page, base, 'data/chatgpt.conversations/2024-02-01T00:00:00Z')
    const view = page.getByRole('region', { name: 'Conversation' })
    await view.getByText('Until doubled, about two hours.').waitFor()
    assert.equal(await view.getByText('An hour (regenerated away).').count(), 0, 'another branch is not shown by default')
    assert.equal(await view.getByRole('link', { name: 'Proofing guide' }).getAttribute('href'), 'https://bread.example/proof')
    await view.getByRole('button', { name: 'Show every branch (1 more)' }).click()
    await view.getByText('An hour (regenerated away).').waitFor()
    await pageShot(b, 'data-conversation')
    await goTo(page, base, 'data/chatgpt.conversations/2023-02-01T00:00:00Z')
    await page.getByRole('region', { name: 'Conversation' }).getByText('an old question').waitFor()
  })

  await t.test('devices: this device\'s address and QR code, add one by address, see it online, remove it', async () => {
    const other = await startDaemonProcess(t, { home: await homeOf(), env: SYNC_ENV })
    const address = /sync\s+peer \S+ on (\S+)/.exec(other.output())![1]!
    const otherId = address.split('/p2p/')[1]!
    await goTo(page, base, 'devices')
    await page.getByRole('img', { name: /^QR code of \/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\// }).waitFor()
    await page.getByLabel('Address of another device').fill(address)
    await page.getByRole('button', { name: 'Add device' }).click()
    await page.getByText(/^Added /).waitFor()
    const row = page.getByRole('region', { name: 'Other devices' }).locator('tbody tr', { hasText: otherId.slice(0, 8) })
    await row.getByText('online').waitFor({ timeout: 60_000 })
    await pageShot(b, 'devices')
    await page.getByRole('button', { name: 'Sync now' }).click()
    await page.getByText(/Sync round done/).waitFor({ timeout: 60_000 })
    await row.getByRole('button', { name: /Remove device/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click()
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    const peers = await d.request({ path: '/v1/peers' })
    assert.ok(!(peers.json.peers as Array<{ peerId: string; connected: boolean }>).some((p) => p.peerId === otherId && !p.connected), 'forgotten (it may only reappear by connecting again)')
  })

  await t.test('schemas: installed with their source; add one from a file', async () => {
    const defPath = join(exportDir, 'notes.json')
    await writeFile(defPath, JSON.stringify({ name: 'Notes', version: '1.0.0', scope: 'notes.items', dialect: 'json', description: 'Notes for the dashboard test', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } }))
    await goTo(page, base, 'schemas')
    const installed = page.locator('div[role=region][aria-label="Installed schemas"]')
    await installed.waitFor()
    await page.getByLabel(/Schema definition/).setInputFiles(defPath)
    await page.getByRole('button', { name: 'Add schema' }).click()
    await page.getByText(/^Added Notes for/).waitFor()
    const row = installed.locator('tbody tr', { hasText: 'notes.items' })
    await row.getByText('added', { exact: true }).waitFor()
    assert.equal(await installed.locator('tbody tr', { hasText: 'spotify.savedTracks' }).getByText('shipped', { exact: true }).count(), 1)
    await pageShot(b, 'schemas')
  })

  await t.test('images and conversations (none without an upstream)', async () => {
    await goTo(page, base, 'images')
    await page.getByText(/No downloaded images yet/).waitFor()
    await page.getByText(/No conversation list cached yet/).waitFor()
    await b.shot('images-empty')
  })

  await t.test('settings: sections closed, a filter, one Save per section that says what applies now and what needs a restart', async () => {
    await goTo(page, base, 'settings')
    const groups = page.locator('details.settings-group')
    await groups.first().waitFor() // the page is drawn after its route resolves: count once it is there
    assert.ok(await groups.count() >= 8)
    assert.equal(await page.locator('details.settings-group[open]').count(), 0, 'every section starts closed')
    assert.ok(await page.evaluate(() => document.documentElement.scrollHeight) < 2500, 'closed sections make a short page')
    assert.equal(await page.getByRole('button', { name: /^Save/ }).filter({ visible: true }).count(), 0)

    // the filter opens the sections that match and hides the rest
    await page.getByLabel('Find a setting').fill('baseUrl')
    const upstream = page.locator('details#cfg-upstream')
    await upstream.locator('[data-key="upstream.baseUrl"]').waitFor()
    assert.equal(await page.locator('details.settings-group').filter({ visible: true }).count(), 1)
    // what only the daemon can judge is refused by it, with the reason, and nothing is written
    await upstream.locator('[data-key="upstream.baseUrl"]').getByRole('textbox').fill('not a url')
    await upstream.getByRole('button', { name: 'Save upstream (1 change)' }).click()
    await upstream.getByText(/Not saved \(CONFIG_INVALID\)/).waitFor()
    await assert.rejects(readFile(d.home.config, 'utf8'), { code: 'ENOENT' })
    await upstream.getByRole('button', { name: 'Undo changes' }).click()

    await page.getByLabel('Find a setting').fill('')
    const sync = page.locator('details#cfg-sync')
    await sync.locator('summary').click()
    const interval = sync.locator('[data-key="sync.intervalMs"]')
    await interval.getByText('default', { exact: true }).waitFor()
    const input = interval.getByRole('spinbutton')
    assert.equal(await input.getAttribute('min'), '100')
    await input.fill('120000')
    await sync.getByText('Some of these changes need a restart.').waitFor()
    await sync.getByRole('button', { name: 'Save sync (1 change)' }).click()
    await sync.getByText('Saved to config.json. Takes effect when the daemon restarts: sync.intervalMs.').waitFor()
    const file = JSON.parse(await readFile(d.home.config, 'utf8'))
    assert.equal(file.sync.intervalMs, 120000)
    await page.getByLabel('Find a setting').fill('log')
    await page.locator('[data-key="logLevel"]').getByText('env HEARTH_LOG_LEVEL', { exact: true }).waitFor()
    await page.getByLabel('Find a setting').fill('')
    await sync.locator('[data-key="sync.intervalMs"]').waitFor()
    await pageShot(b, 'settings')
  })

  await t.test('a phone-sized screen: the page list scrolls, tables stack, nothing overflows', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await goTo(page, base, 'overview')
    await page.getByRole('heading', { name: 'Files', exact: true }).waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`)
    // the header is one line (Log out beside the brand), and every page's tab is on the screen
    const header = await page.locator('header.top').boundingBox()
    const logout = await page.getByRole('button', { name: 'Log out' }).boundingBox()
    const brand = await page.locator('header.top .brand').boundingBox()
    assert.ok(header !== null && logout !== null && brand !== null)
    assert.ok(Math.abs((logout.y + logout.height / 2) - (brand.y + brand.height / 2)) < 8, 'Log out on the brand\'s line')
    assert.ok(header.height < 70, `header ${header.height}px tall`)
    const nav = page.getByRole('navigation', { name: 'Dashboard pages' })
    assert.equal(await nav.evaluate((el) => el.scrollWidth - el.clientWidth), 0, 'the tab bar does not scroll sideways')
    for (const tab of await nav.getByRole('link').all()) {
      const box = await tab.boundingBox()
      assert.ok(box !== null && box.x >= 0 && box.x + box.width <= 390, `${await tab.textContent()} is on the screen`)
    }
    await pageShot(b, 'overview-phone')
    const top = await page.locator('header.top').boundingBox()
    const bar = await nav.boundingBox()
    await keepScreenshot(await clip(b, 'phone-header', { x: 0, y: 0, width: 390, height: Math.ceil(bar!.y + bar!.height - top!.y) }), 'phone-header')
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  assert.deepEqual(b.errors, [])
})

test('images: the gallery shows the downloaded outputs of image jobs; conversations from the cache', async (t) => {
  const sim = await startUpstreamSim({})
  t.after(async () => { await sim.stop() })
  const character = sim.state.addCharacter('Ada', { modelStatus: 'SUCCESS' })
  const d = await startDaemonProcess(t, { env: { HEARTH_UPSTREAM_URL: sim.baseUrl } })
  const login = await runCli(d.home, ['login', '--token', '-'], sim.issueToken({ email: 'owner@example.org', expiresInSec: 3600 }) + '\n')
  assert.equal(login.code, 0, login.stderr)
  const created = await d.request({ method: 'POST', path: '/api/v0/conversations', body: { characterId: character.id } })
  assert.equal(created.json.success, true, created.body.toString())
  assert.equal((await d.request({ path: '/api/v0/conversations' })).status, 200, 'listing it through the proxy caches the list')
  const image = await d.request({ method: 'POST', path: '/api/v0/images', body: { prompt: `a lighthouse at dusk, painted by <${character.id}>`, width: 256, height: 256, samples: 2 } })
  const jobId = image.json.jobId as string
  const deadline = Date.now() + 120_000
  for (;;) {
    const r = await d.request({ path: `/v1/images/${jobId}` })
    if (r.status === 200 && r.json.state === 'done' && r.json.files.length === 2) break
    assert.ok(Date.now() < deadline, `image job not downloaded: ${r.body.toString()}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }

  const b = await openBrowser(t)
  await b.page.goto(await loginLink(d))
  await goTo(b.page, dashboardUrl(d), 'images')
  const pictures = b.page.getByRole('img', { name: /^Image for: a lighthouse at dusk/ })
  await pictures.first().waitFor()
  assert.equal(await pictures.count(), 2)
  await b.page.waitForFunction(() => [...(document as unknown as { images: Iterable<{ complete: boolean; naturalWidth: number }> }).images].every((i) => i.complete && i.naturalWidth > 0))
  assert.equal(await pictures.first().evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth), 64, 'the browser decoded the downloaded PNG')
  await b.page.locator('div[role=region][aria-label="Conversations"] tbody tr', { hasText: 'Ada' }).waitFor()
  await pageShot(b, 'images')
  assert.deepEqual(b.errors, [])

  // the file route serves only files of the job's own folder, raster images inline
  const files = await d.request({ path: `/v1/images/${jobId}/files/image-0.png` })
  assert.equal(files.status, 200)
  assert.equal(files.headers['content-type'], 'image/png')
  assert.equal((await d.request({ path: `/v1/images/${jobId}/files/..%2F..%2Fidentity%2Fidentity.json` })).status, 400)
  assert.equal((await d.request({ path: `/v1/images/${jobId}/files/nope.png` })).status, 404)
})
