// The dashboard's Builders page against a real daemon with its builder listener, and a test
// builder signing its requests with its own wallet: the owner sees a pending access request with
// the consent labels of its scopes, approves it, sees the grant, watches the builder's read in
// the access log, revokes the grant, and the builder's next read is refused (and logged).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generatePrivateKey } from 'viem/accounts'
import { startDaemonProcess, runCli, REPO_ROOT, type DaemonProcess } from '../support/daemon.js'
import { openBrowser } from '../support/browser.js'
import { testBuilder } from '../support/builder-client.js'
import { tempDir } from '../support/tmp.js'
import { createIdentity } from '../../src/identity/index.js'
import { homeLayout } from '../../src/home.js'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'

function builderEndpoint (d: DaemonProcess): { port: number; audience: string } {
  const m = /^builders {2}(\S+) {2}\(port (\d+)\)$/m.exec(d.output())
  assert.ok(m !== null, `no builder listener line in:\n${d.output()}`)
  return { audience: m[1]!, port: Number(m[2]) }
}

test('builders page: consent labels, approve, the grant and its reads in the access log, revoke', async (t) => {
  const root = await tempDir(t, 'hearth-home-')
  await createIdentity(homeLayout(root), { privateKey: generatePrivateKey() })
  const d = await startDaemonProcess(t, { home: root, args: ['--set', 'builders.listen="127.0.0.1:0"'] })
  assert.equal((await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'bob' } })).status, 201)
  const builder = testBuilder(generatePrivateKey(), builderEndpoint(d))
  const reg = await runCli(d.home, ['builders', 'register', builder.address, '--public-key', 'builder-pk', '--app-url', 'https://app.example'])
  assert.equal(reg.code, 0, reg.stderr)
  const asked = await builder.request({ method: 'POST', path: '/v1/access-requests', body: { scopes: ['instagram.profile'], purpose: 'Show your profile on your reading list', appUrl: 'https://app.example' } })
  assert.equal(asked.status, 201, JSON.stringify(asked.json))

  const b = await openBrowser(t)
  const { page } = b
  const base = /^dashboard (http:\/\/\S+)/m.exec(d.output())![1]!
  await page.goto((await d.request({ method: 'POST', path: '/v1/ui/login-link' })).json.url as string)
  await page.goto(`${base}#/builders`)
  const request = page.locator('article.request')
  await request.getByText('Your Instagram profile').waitFor()
  await request.getByText('Show your profile on your reading list').waitFor()
  await request.getByText(builder.address).waitFor()
  await request.getByText(/Username, name, bio/).waitFor()
  const shot = await b.shot('builders-request')
  await request.getByRole('button', { name: 'Approve' }).click()
  await page.getByText('No access request is waiting for you.').waitFor()

  const grants = page.locator('div[role=region][aria-label="Grants"]')
  const row = grants.locator('tbody tr', { hasText: 'instagram.profile' })
  await row.getByText('active', { exact: true }).waitFor()
  const grantId = (await d.request({ path: '/v1/grants' })).json.grants[0].grantId as string
  const read = await builder.request({ path: '/v1/data/instagram.profile', grantId })
  assert.equal(read.status, 200)
  assert.equal(read.json.data.username, 'bob')

  const log = page.locator('div[role=region][aria-label="Access log"]')
  await page.getByLabel('Scope').fill('instagram.profile')
  await page.getByRole('button', { name: 'Filter' }).click()
  await log.locator('tbody tr', { hasText: 'read' }).getByText('200', { exact: true }).waitFor({ timeout: 30_000 })
  await b.shot('builders')
  if (process.env.HEARTH_UPDATE_SCREENSHOTS === '1') {
    await mkdir(join(REPO_ROOT, 'docs', 'screenshots'), { recursive: true })
    await copyFile(shot, join(REPO_ROOT, 'docs', 'screenshots', 'builders.png'))
  }

  await row.getByRole('button', { name: /Revoke grant/ }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
  await row.getByText('revoked', { exact: true }).waitFor()
  const refused = await builder.request({ path: '/v1/data/instagram.profile', grantId })
  assert.equal(refused.status, 403, JSON.stringify(refused.json))
  await log.locator('tbody tr', { hasText: String(refused.json.error.errorCode) }).first().waitFor({ timeout: 30_000 })
  assert.deepEqual(b.errors, [])
})
