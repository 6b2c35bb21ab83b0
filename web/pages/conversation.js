// A ChatGPT conversation (chatgpt.conversations) read as a conversation: the branch the owner last
// saw by default, every branch on request. Schema 2.0.0 gives each message its parent and the
// conversation its currentMessage; a 1.0.0 file holds one branch without parents, shown whole.
import { useState } from 'preact/hooks'
import { html, fmtTime } from '../lib.js'

/** The messages from the first to `last` through their parents; all of them without `last`. */
export function currentBranch (messages, last) {
  if (last === undefined) return messages
  const byId = new Map(messages.map((m) => [m.id, m]))
  const branch = []
  const seen = new Set()
  for (let m = byId.get(last); m !== undefined && !seen.has(m.id); m = byId.get(m.parent)) {
    seen.add(m.id)
    branch.push(m)
  }
  return branch.reverse()
}

function Message ({ m, depth, other, forks }) {
  return html`<li class=${`message ${m.role}${other ? ' other-branch' : ''}`} style=${depth > 0 ? `margin-left: ${Math.min(depth, 12)}rem` : undefined}>
    <p class="who"><strong>${m.role === 'tool' ? m.name ?? 'tool' : m.role}</strong>
      ${m.createdAt ? html` · <time datetime=${m.createdAt}>${fmtTime(m.createdAt)}</time>` : null}
      ${m.model ? html` · ${m.model}` : null}
      ${other ? html` · <span class="muted">another branch</span>` : null}
      ${forks > 1 ? html` · <span class="muted">${forks} versions of this reply</span>` : null}</p>
    ${m.language ? html`<pre class="raw small"><code data-language=${m.language}>${m.text}</code></pre>` : html`<p class="text">${m.text}</p>`}
    ${m.attachments?.length > 0 ? html`<p class="muted">${m.attachments.length} attachment${m.attachments.length === 1 ? '' : 's'} (in the export)</p>` : null}
    ${m.sources?.length > 0 ? html`<ol class="sources" aria-label="Sources">${m.sources.map((s) => html`<li><a href=${s.url} rel="noreferrer noopener" target="_blank">${s.title ?? s.url}</a>${s.attribution ? html` <span class="muted">${s.attribution}</span>` : null}</li>`)}</ol>` : null}
  </li>`
}

export function Conversation ({ data }) {
  const [all, setAll] = useState(false)
  const messages = Array.isArray(data.messages) ? data.messages : []
  const branch = currentBranch(messages, data.currentMessage)
  const onBranch = new Set(branch.map((m) => m.id))
  const children = new Map()
  for (const m of messages) children.set(m.parent, (children.get(m.parent) ?? 0) + 1)
  const shown = all ? messages : branch
  const others = messages.length - branch.length
  return html`<section class="conversation" aria-label="Conversation">
    <p class="muted">${all ? `Every branch: ${messages.length} messages, the current branch unmarked.` : `The branch you last saw: ${branch.length} of ${messages.length} messages.`}
      ${others > 0 ? html` <button type="button" aria-pressed=${all} onClick=${() => setAll(!all)}>${all ? 'Show the current branch' : `Show every branch (${others} more)`}</button>` : null}</p>
    <ol class="messages">${shown.map((m) => html`<${Message} key=${m.id} m=${m} depth=${all && !onBranch.has(m.id) ? 1 : 0} other=${!onBranch.has(m.id)} forks=${children.get(m.parent) ?? 0} />`)}</ol>
  </section>`
}
