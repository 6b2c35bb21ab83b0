// A real browser for the dashboard tests: Debian's chromium driven by playwright-core, headless,
// with a fresh profile per test and nothing that reaches the network on its own.
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import type { TestContext } from 'node:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium'
export const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'
]

export interface TestBrowser {
  context: BrowserContext
  page: Page
  /** Where this test's screenshots go (its temp folder). */
  shotsDir: string
  /** Saves a full-page screenshot as <name>.png in the test's folder; returns its path. */
  shot (name: string, page?: Page): Promise<string>
  /**
   * Uncaught page errors, console errors, and answers that are the page's own bug (404, 5xx) seen
   * so far; refusals the test provokes (400, 401, 403, 409) are not errors of the page.
   */
  errors: string[]
}

export async function openBrowser (t: Pick<TestContext, 'after'>, opts: { viewport?: { width: number; height: number } } = {}): Promise<TestBrowser> {
  // one hook that closes the browser and only then removes its folder (a running chromium
  // would write into a folder being removed)
  const dir = await mkdtemp(join(tmpdir(), 'hearth-browser-'))
  let context: BrowserContext | null = null
  t.after(async () => {
    await context?.close().catch(() => {})
    await rm(dir, { recursive: true, force: true, maxRetries: 3 })
  })
  context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    timeout: 120_000
  })
  context.setDefaultTimeout(60_000)
  const page = context.pages()[0] ?? await context.newPage()
  const errors: string[] = []
  const watch = (p: Page): void => {
    p.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`))
    p.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`) })
    p.on('response', (r) => { if (r.status() === 404 || r.status() >= 500) errors.push(`${r.status()} ${r.request().method()} ${r.url()}`) })
  }
  watch(page)
  context.on('page', watch)
  return {
    context,
    page,
    shotsDir: dir,
    errors,
    async shot (name, p = page) {
      const path = join(dir, `${name}.png`)
      await p.screenshot({ path, fullPage: true })
      return path
    }
  }
}
