// The page a browser waits on while the owner decides about an assistant (the OAuth authorization
// endpoint's consent happens in the dashboard or the CLI, never on this page, which anyone who
// started the flow can see). It reloads itself; the reload redirects once the owner decided.
import type { ConsentItem } from '../connectors/consent.js'
import type { AssistantRequest } from './types.js'

export function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

export function waitPage (p: { request: AssistantRequest; clientName: string; consent: ConsentItem[] }): string {
  const asked = p.consent.length === 0
    ? '<p>It named no scopes: the owner chooses what to share.</p>'
    : `<ul>${p.consent.map((c) => `<li><b>${escapeHtml(c.label)}</b> (<code>${escapeHtml(c.pattern)}</code>): ${escapeHtml(c.description)}</li>`).join('')}</ul>`
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="3">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1"><title>Waiting for the owner · Hearth</title></head>' +
    '<body style="font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a;background:#fff">' +
    `<h1 style="font-size:1.4rem">Waiting for the owner's approval</h1><p>The assistant <b>${escapeHtml(p.clientName)}</b> asks to read data from this Hearth.</p>${asked}` +
    `<p>Approve it on the dashboard's <b>Assistants</b> page, or on the Hearth computer with</p><pre>hearth requests approve ${escapeHtml(p.request.id)} --scope &lt;pattern&gt;</pre>` +
    `<p data-request="${escapeHtml(p.request.id)}">This page goes on by itself once the owner decided.</p></body></html>`
}
