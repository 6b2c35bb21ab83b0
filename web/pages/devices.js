// Devices: `GET /v1/peers` (this device's addresses, the others with their sync state),
// `POST /v1/peers` (add by address), `DELETE /v1/peers/{id}`, `POST /v1/sync`, `POST /v1/restore`:
// the calls behind `hearth peers`, `hearth sync` and `hearth restore`.
import { useMemo, useState } from 'preact/hooks'
import qrcode from 'qrcode-generator'
import { api, html, useApi, useAction, Section, Table, Badge, ErrorNote, Loading, Confirm, fmtAgo, shortId } from '../lib.js'

/** A QR code drawn as SVG rectangles (no markup from strings), for pairing from a phone camera. */
function QrCode ({ text }) {
  const cells = useMemo(() => {
    const qr = qrcode(0, 'M')
    qr.addData(text)
    qr.make()
    const n = qr.getModuleCount()
    const out = []
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) out.push([c, r])
    return { n, out }
  }, [text])
  const size = cells.n + 8
  return html`<svg class="qr" viewBox=${`-4 -4 ${size} ${size}`} role="img" aria-label=${`QR code of ${text}`} shape-rendering="crispEdges">
    <rect x="-4" y="-4" width=${size} height=${size} fill="#fff" />
    ${cells.out.map(([x, y]) => html`<rect x=${x} y=${y} width="1" height="1" fill="#000" />`)}
  </svg>`
}

function withPeerId (address, peerId) {
  return address.includes('/p2p/') ? address : `${address}/p2p/${peerId}`
}

// Loopback and wildcard addresses are no use to another device; list them last.
const rank = (a) => /\/ip[46]\/(127\.|::1\/|0\.0\.0\.0)/.test(a) ? 1 : 0

function ThisDevice ({ sync }) {
  const addresses = (sync.addresses ?? []).map((a) => withPeerId(a, sync.peerId)).sort((a, b) => rank(a) - rank(b))
  const [chosen, setChosen] = useState(0)
  const shown = addresses[Math.min(chosen, addresses.length - 1)]
  return html`<${Section} id="this-device" title="This device">
    <p>Device id <code class="wrap">${sync.peerId}</code></p>
    ${addresses.length === 0 ? html`<p class="muted">Not listening on any address (<code>sync.listen</code>).</p>` : html`
      <div class="pairing">
        <fieldset>
          <legend>Addresses (give one to your other device)</legend>
          ${addresses.map((a, i) => html`<label class="radio"><input type="radio" name="addr" checked=${a === shown} onChange=${() => setChosen(i)} /><code class="wrap">${a}</code></label>`)}
        </fieldset>
        <figure><${QrCode} text=${shown} /><figcaption>Scan on the other device, or copy the address: <code class="wrap">hearth peers add ${shortId(shown, 18)}</code></figcaption></figure>
      </div>`}
  <//>`
}

function AddDevice ({ onAdded }) {
  const [address, setAddress] = useState('')
  const add = useAction(async (multiaddr) => await api('/v1/peers', { method: 'POST', body: { multiaddr } }))
  const submit = async (e) => {
    e.preventDefault()
    const r = await add.run(address.trim())
    if (r !== undefined) { setAddress(''); onAdded() }
  }
  return html`<form class="row" onSubmit=${submit}>
    <label class="grow">Address of another device
      <input type="text" name="multiaddr" required value=${address} onInput=${(e) => setAddress(e.currentTarget.value)} placeholder="/ip4/192.168.1.20/tcp/4011/p2p/12D3Koo…" autocomplete="off" spellcheck="false" />
    </label>
    <button type="submit" class="primary" disabled=${add.busy}>Add device</button>
    <${ErrorNote} error=${add.error} what="Not added" />
    ${add.result ? html`<p class="note ok" role="status">Added ${shortId(add.result.added, 16)}; it is dialled now and after every restart.</p>` : null}
  </form>`
}

function Others ({ peers, reload }) {
  const [removing, setRemoving] = useState(null)
  const remove = useAction(async (id) => await api(`/v1/peers/${encodeURIComponent(id)}`, { method: 'DELETE' }))
  const confirm = async () => { if (await remove.run(removing) !== undefined) { setRemoving(null); reload() } }
  return html`
    <${Table} caption="Other devices" rows=${peers} rowKey=${(p) => p.peerId} empty="No other device yet: add one by its address." columns=${[
      { label: 'Device', cell: (p) => html`<code title=${p.peerId}>${shortId(p.peerId, 8)}</code>` },
      { label: 'State', cell: (p) => html`<${Badge} value=${p.syncing ? 'syncing' : p.connected ? 'online' : 'offline'} tone=${p.connected ? 'ok' : 'muted'} />` },
      { label: 'Last sync', cell: (p) => fmtAgo(p.lastSyncAt) },
      { label: 'To receive', cell: (p) => p.pendingIn ?? '–', cls: 'num' },
      { label: 'To send', cell: (p) => p.pendingOut ?? '–', cls: 'num' },
      { label: 'Last error', cell: (p) => p.lastError ?? '–' },
      { label: 'Actions', cell: (p) => html`<button type="button" class="danger small" onClick=${() => setRemoving(p.peerId)} aria-label=${`Remove device ${p.peerId}`}>Remove</button>` }
    ]} />
    <${ErrorNote} error=${remove.error} what="Not removed" />
    <${Confirm} open=${removing !== null} title="Remove this device?" confirmLabel="Remove" danger busy=${remove.busy} onCancel=${() => setRemoving(null)} onConfirm=${confirm}>
      <p>This device stops dialling <code class="wrap">${removing}</code> and forgets how far it had synced with it. Nothing is deleted on either device.</p>
      <p>A device of the same owner can still connect again (on the same network, or by dialling this one).</p>
    <//>`
}

function SyncActions ({ reload }) {
  const sync = useAction(async () => await api('/v1/sync', { method: 'POST' }))
  const restore = useAction(async () => await api('/v1/restore', { method: 'POST' }))
  const [confirmRestore, setConfirmRestore] = useState(false)
  const rounds = sync.result?.rounds
  return html`<div class="actions">
      <button type="button" disabled=${sync.busy} onClick=${async () => { await sync.run(); reload() }}>${sync.busy ? 'Syncing…' : 'Sync now'}</button>
      <button type="button" disabled=${restore.busy} onClick=${() => setConfirmRestore(true)}>${restore.busy ? 'Restoring…' : 'Restore from chain…'}</button>
    </div>
    ${rounds ? html`<p class="note ok" role="status">Sync round done with ${rounds.length} device${rounds.length === 1 ? '' : 's'}.</p>` : null}
    ${restore.result ? html`<pre class="raw small" role="status">${JSON.stringify(restore.result, null, 2)}</pre>` : null}
    <${ErrorNote} error=${sync.error} what="Sync failed" />
    <${ErrorNote} error=${restore.error} what="Restore failed" />
    <${Confirm} open=${confirmRestore} title="Restore from the chain?" confirmLabel="Restore" onCancel=${() => setConfirmRestore(false)} onConfirm=${async () => { setConfirmRestore(false); await restore.run(); reload() }}>
      <p>Lists every file registered on the chain for this owner, fetches the ones this device lacks from storage, decrypts them and writes them into the data folder. Files already here are left alone.</p>
    <//>`
}

export function DevicesPage () {
  const { data, error, loading, reload } = useApi('/v1/peers', { every: 3000 })
  if (loading && data === undefined) return html`<${Loading} />`
  if (data === undefined) return html`<${ErrorNote} error=${error} />`
  if (data.enabled === false) {
    return html`<p class="note">Device sync is off on this daemon (<code>sync.enabled</code> in Settings).</p>
      <${Section} id="restore" title="Restore"><${SyncActions} reload=${reload} /><//>`
  }
  return html`
    <${ErrorNote} error=${error} what="Last refresh failed" />
    <${ThisDevice} sync=${data} />
    <${Section} id="others" title="Other devices" actions=${html`<${SyncActions} reload=${reload} />`}>
      <${AddDevice} onAdded=${reload} />
      <${Others} peers=${data.peers ?? []} reload=${reload} />
    <//>`
}
