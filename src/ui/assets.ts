// The dashboard's files, all shipped with the package and read into memory once at start: the
// page's own scripts and styles (`<install>/web/`) and the few browser libraries it imports
// (Preact, its hooks, htm, qrcode-generator) straight from their npm packages' ES module builds.
// Only names in this table are ever served, so a request path never reaches the file system.
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { extname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** `<install>/web`: the same depth from src/ and dist/. */
export function webDir (): string {
  return fileURLToPath(new URL('../../web/', import.meta.url))
}

/** Bare specifiers the page's modules import, mapped (import map) to /assets/vendor/<file>. */
const VENDOR: Record<string, { specifier: string; file: string }> = {
  preact: { specifier: 'preact', file: 'preact.mjs' },
  hooks: { specifier: 'preact/hooks', file: 'preact-hooks.mjs' },
  htm: { specifier: 'htm', file: 'htm.mjs' },
  qrcode: { specifier: 'qrcode-generator', file: 'qrcode.mjs' }
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon'
}

export interface Asset { body: Buffer; type: string; etag: string }

export interface AssetTable {
  /** The page shell (index.html with the import map filled in). */
  page: Asset
  /** `/assets/...` → asset. */
  files: ReadonlyMap<string, Asset>
  /** The Content-Security-Policy every response carries (the import map is allowed by its hash). */
  csp: string
}

function asset (body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
}

async function walk (dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...await walk(p))
    else if (e.isFile() && TYPES[extname(e.name)] !== undefined) out.push(p)
  }
  return out
}

export async function loadAssets (dir = webDir()): Promise<AssetTable> {
  const files = new Map<string, Asset>()
  for (const path of await walk(dir)) {
    const rel = relative(dir, path).split(sep).join('/')
    if (rel === 'index.html') continue
    files.set(`/assets/${rel}`, asset(await readFile(path), TYPES[extname(path)]!))
  }
  const imports: Record<string, string> = {}
  for (const v of Object.values(VENDOR)) {
    const url = `/assets/vendor/${v.file}`
    files.set(url, asset(await readFile(fileURLToPath(import.meta.resolve(v.specifier))), TYPES['.mjs']!))
    imports[v.specifier] = url
  }
  const importMap = JSON.stringify({ imports })
  const hash = createHash('sha256').update(importMap).digest('base64')
  const shell = (await readFile(join(dir, 'index.html'), 'utf8'))
    .replace('<!--importmap-->', `<script type="importmap">${importMap}</script>`)
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${hash}'`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'"
  ].join('; ')
  return { page: asset(Buffer.from(shell), TYPES['.html']!), files, csp }
}
