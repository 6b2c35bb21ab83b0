// The dashboard's Assistants page against a real daemon and a real MCP client (`hearth mcp` under
// the SDK's Client): the owner sees the assistant waiting, chooses its scopes by their consent
// labels and approves, sees the connection and its activity, narrows it, then revokes it — and
// the client's next call is refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { REPO_ROOT } from '../support/daemon.js'
import { openBrowser } from '../support/browser.js'
import { daemonWithHistory, stdioClient, textOf } from '../support/assistants.js'

test('assistants page: approve with chosen scopes, activity, narrow, revoke', { timeout: 240_000 }, async (t) => {
  const d = await daemonWithHistory(t)
  const client = await stdioClient(t, d, 'Cursor')
  assert.match(textOf(await client.callTool({ name: 'list_scopes', arguments: {} })), /ASSISTANT_NOT_APPROVED/)

  const b = await openBrowser(t)
  const { page } = b
  const base = /^dashboard (http:\/\/\S+)/m.exec(d.output())![1]!
  await page.goto((await d.request({ method: 'POST', path: '/v1/ui/login-link' })).json.url as string)
  await page.goto(`${base}#/assistants`)
  const request = page.locator('article.request')
  await request.getByText('Cursor asks to connect').waitFor()
  await request.getByText('It named no scopes. Choose what it may read:').waitFor()
  const approve = request.getByRole('button', { name: 'Approve' })
  assert.equal(await approve.isDisabled(), true)
  await request.getByRole('checkbox', { name: /Your ChatGPT conversations/ }).check()
  await request.getByRole('checkbox', { name: /^Your Instagram profile instagram\.profile / }).check()
  const shot = await b.shot('assistants-request')
  await approve.click()
  await page.getByText('No assistant is waiting for you.').waitFor()

  const row = page.locator('div[role=region][aria-label="Connections"] tbody tr', { hasText: 'Cursor' })
  await row.getByText('active', { exact: true }).waitFor()
  await row.getByText('Your ChatGPT conversations').waitFor()
  const read = await client.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })
  assert.equal(read.isError, false, textOf(read))
  assert.match(textOf(read), /jane\.doe/)

  await row.getByRole('button', { name: 'Activity of Cursor' }).click()
  const activity = page.locator('div[role=region][aria-label="Activity"]')
  await activity.locator('tbody tr', { hasText: 'instagram.profile' }).getByText('200', { exact: true }).waitFor({ timeout: 30_000 })
  await b.shot('assistants')
  if (process.env.HEARTH_UPDATE_SCREENSHOTS === '1') {
    await mkdir(join(REPO_ROOT, 'docs', 'screenshots'), { recursive: true })
    await copyFile(shot, join(REPO_ROOT, 'docs', 'screenshots', 'assistants.png'))
  }

  // narrow to the conversations only: the profile is refused from the next call
  await row.getByRole('button', { name: 'Narrow Cursor' }).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('checkbox', { name: /^Your Instagram profile instagram\.profile / }).uncheck()
  await dialog.getByRole('button', { name: 'Narrow' }).click()
  await row.getByText('Your Instagram profile').waitFor({ state: 'detached' })
  assert.match(textOf(await client.callTool({ name: 'read_records', arguments: { scope: 'instagram.profile' } })), /^SCOPE_NOT_GRANTED/)

  await row.getByRole('button', { name: 'Revoke Cursor' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
  await row.getByText('revoked', { exact: true }).waitFor()
  assert.match(textOf(await client.callTool({ name: 'read_records', arguments: { scope: 'chatgpt.conversations' } })), /^ASSISTANT_REVOKED/)
  assert.deepEqual(b.errors, [])
})
