// The dashboard page: a header, the page list, and the page the address (#/name/...) names.
// Every page reads and changes the daemon through its JSON routes (lib.js `api`), the same
// routes the `hearth` CLI calls over the owner socket.
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, html, link, onSessionLost, useApi, useRoute, shortId } from './lib.js'
import { OverviewPage } from './pages/overview.js'
import { DataPage } from './pages/data.js'
import { ImportPage } from './pages/import.js'
import { DevicesPage } from './pages/devices.js'
import { BuildersPage } from './pages/builders.js'
import { AssistantsPage } from './pages/assistants.js'
import { SchemasPage } from './pages/schemas.js'
import { ImagesPage } from './pages/images.js'
import { SettingsPage } from './pages/settings.js'
import { SearchPage } from './pages/search.js'

const PAGES = [
  { id: 'overview', title: 'Overview', Page: OverviewPage },
  { id: 'data', title: 'Data', Page: DataPage },
  { id: 'import', title: 'Import', Page: ImportPage },
  { id: 'devices', title: 'Devices', Page: DevicesPage },
  { id: 'builders', title: 'Builders', Page: BuildersPage },
  { id: 'assistants', title: 'Assistants', Page: AssistantsPage },
  { id: 'schemas', title: 'Schemas', Page: SchemasPage },
  { id: 'images', title: 'Images', Page: ImagesPage },
  { id: 'settings', title: 'Settings', Page: SettingsPage },
  { id: 'search', title: 'Search', Page: SearchPage }
]

/** The header's search box: it opens the Search page with its words. */
function SearchBox () {
  const find = (e) => {
    e.preventDefault()
    const q = new FormData(e.currentTarget).get('q').trim()
    if (q !== '') location.hash = link('search', q)
  }
  return html`<form class="search-box" role="search" aria-label="Search your data" onSubmit=${find}>
    <input type="search" name="q" aria-label="Search your data" placeholder="Search your data" />
  </form>`
}

function LoggedOut () {
  return html`<main id="main" class="page narrow">
    <h1>Logged out</h1>
    <p>The dashboard session ended (you logged out, it expired, or the daemon restarted).
    Run <code>hearth ui</code> on this computer for a new one-time login link.</p>
  </main>`
}

function App () {
  const route = useRoute()
  const [lost, setLost] = useState(false)
  useEffect(() => onSessionLost(() => setLost(true)), [])
  const health = useApi('/health')
  const page = PAGES.find((p) => p.id === route[0]) ?? PAGES[0]
  const heading = useRef(null)
  // a new page moves focus to its heading, so keyboard and screen-reader users start there
  useEffect(() => { document.title = `${page.title} · Hearth`; heading.current?.focus() }, [page.id])
  if (lost) return html`<${LoggedOut} />`
  const logout = async () => { await api('/logout', { method: 'POST' }).catch(() => {}); setLost(true) }
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); heading.current?.focus() }}>Skip to content</a>
    <header class="top">
      <div class="brand"><img src="/assets/icon.svg" alt="" width="28" height="28" /> Hearth</div>
      <${SearchBox} />
      <span class="owner" title=${health.data?.owner ?? ''}>${health.data ? `owner ${shortId(health.data.owner, 6)}` : ''}</span>
      <button type="button" class="quiet" onClick=${logout}>Log out</button>
    </header>
    <nav class="pages" aria-label="Dashboard pages">
      <ul>${PAGES.map((p) => html`<li><a href=${`#/${p.id}`} aria-current=${p.id === page.id ? 'page' : undefined}>${p.title}</a></li>`)}</ul>
    </nav>
    <main id="main" class="page">
      <h1 tabindex="-1" ref=${heading}>${page.title}</h1>
      <${page.Page} route=${route.slice(1)} />
    </main>`
}

const root = document.getElementById('app')
root.textContent = '' // the "Loading…" line of the static page
render(html`<${App} />`, root)
