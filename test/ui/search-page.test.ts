// The dashboard's search against a real daemon in a real browser: the header's search box opens
// the Search page, hits show their marked words (the owner's text as text, never markup), more
// results page in, and a hit opens the version on the Data page at its record.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startDaemonProcess } from '../support/daemon.js'
import { openBrowser } from '../support/browser.js'

// evaluated in the page, not in Node
declare const document: { activeElement: { textContent: string | null } | null; querySelectorAll: (s: string) => { length: number } }

test('search box: marked hits, more results, and a hit opens its version at the record', { timeout: 300_000 }, async (t) => {
  const d = await startDaemonProcess(t)
  const messages = [
    { id: 'm0', role: 'user', text: 'what should the lease say about the deposit', contentType: 'text', createdAt: '2024-03-01T10:00:00Z' },
    { id: 'm1', role: 'assistant', text: 'A lease names the deposit <img src=x onerror="window.pwned=1"> and when it is returned', contentType: 'text', createdAt: '2024-03-01T10:01:00Z' },
    ...Array.from({ length: 30 }, (_, i) => ({ id: `r${i}`, role: 'user', text: `another lease question number ${i}`, contentType: 'text', createdAt: '2024-03-01T11:00:00Z' }))
  ]
  const posted = await d.request({ method: 'POST', path: '/v1/data/chatgpt.conversations?collectedAt=2024-03-01T12:00:00Z', body: { id: 'c1', title: 'Flat hunting', createdAt: '2024-03-01T10:00:00Z', messages } })
  assert.equal(posted.status, 201, posted.body.toString())
  for (let i = 0; ; i++) {
    const r = await d.request({ path: '/v1/search?q=lease&limit=1' })
    if (r.json.complete === true && r.json.hits.length === 1) break
    assert.ok(i < 600, 'indexed in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  const b = await openBrowser(t)
  const { page } = b
  const base = /^dashboard (http:\/\/\S+)/m.exec(d.output())![1]!
  await page.goto((await d.request({ method: 'POST', path: '/v1/ui/login-link' })).json.url as string)
  await page.goto(`${base}#/overview`)
  const box = page.getByRole('searchbox', { name: 'Search your data' })
  await box.fill('lease deposit')
  await box.press('Enter')
  await page.waitForURL(/#\/search\/lease%20deposit$/)
  const hits = page.locator('li.hit')
  await hits.first().waitFor()
  assert.equal(await hits.count(), 2)
  assert.deepEqual(new Set(await hits.first().locator('mark').allTextContents()), new Set(['lease', 'deposit']))
  // the markup in the owner's text is text
  await page.getByText('<img src=x onerror="window.pwned=1">', { exact: false }).first().waitFor()
  assert.equal(await page.evaluate(() => document.querySelectorAll('li.hit img').length), 0)
  await b.shot('search-results')

  // paging: 32 records hold "lease", 20 a page
  const form = page.locator('form.search-form')
  await form.getByRole('searchbox').fill('lease')
  await form.getByRole('button', { name: 'Search' }).click()
  await page.getByRole('button', { name: 'More results' }).click()
  await page.waitForFunction(() => document.querySelectorAll('li.hit').length === 32)
  assert.equal(await page.getByRole('button', { name: 'More results' }).count(), 0)

  // a filter that excludes everything
  await form.getByLabel('Scope').fill('spotify.*')
  await form.getByLabel('Scope').press('Tab')
  await page.getByText('No records found').waitFor()
  await form.getByLabel('Scope').fill('')
  await form.getByLabel('Scope').press('Tab')

  await form.getByRole('searchbox').fill('onerror')
  await form.getByRole('button', { name: 'Search' }).click()
  await hits.first().getByRole('link').click()
  await page.waitForURL(/#\/data\/chatgpt\.conversations\/2024-03-01T12%3A00%3A00Z\/%2Fmessages%2F1$/)
  const record = page.getByRole('region', { name: 'Record' })
  await record.getByText('/messages/1').waitFor()
  await record.getByText(/A lease names the deposit/).waitFor()
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Record /messages/1', 'the record has the focus')
  await b.shot('search-record')
  assert.deepEqual(b.errors, [])
})
