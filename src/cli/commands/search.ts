// `hearth search`: the owner's search over every stored version (GET /v1/search), one hit per
// record with the command that opens its version. Snippets are the owner's data, which may hold
// anything: control characters are shown as spaces, so no text can drive the terminal.
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'
import type { SearchAnswer, SearchHit } from '../../search/types.js'

const USAGE = 'usage: hearth search <words…> [--scope PATTERN] [--since ISO] [--until ISO] [--limit N] [--cursor NEXT] [--json]\n' +
  '  finds records in every stored version: words (a trailing * makes a prefix), "quoted phrases";\n' +
  '  --scope takes a scope or source.* (instagram.*); --since/--until a date or instant'

function printable (s: string): string {
  return s.replace(/[\p{Cc}\p{Cf}]/gu, ' ')
}

/** The snippet with its matched words between [ ]. */
export function markedSnippet (hit: Pick<SearchHit, 'snippet' | 'marks'>): string {
  let out = ''
  let at = 0
  for (const [start, end] of hit.marks) {
    if (start < at || end > hit.snippet.length) continue
    out += printable(hit.snippet.slice(at, start)) + '[' + printable(hit.snippet.slice(start, end)) + ']'
    at = end
  }
  return out + printable(hit.snippet.slice(at))
}

export function searchText (answer: SearchAnswer): string {
  const lines: string[] = []
  for (const hit of answer.hits) {
    lines.push(`${hit.scope}  ${hit.at ?? hit.collectedAt}  ${printable(hit.pointer === '' ? '/' : hit.pointer)} ${printable(hit.field)}`)
    lines.push(`  ${markedSnippet(hit)}`)
    lines.push(`  hearth get ${hit.scope} --at ${hit.collectedAt}`)
  }
  if (answer.hits.length === 0) lines.push('no records found')
  if (answer.next !== null) lines.push(`more: hearth search … --cursor ${answer.next}`)
  if (!answer.complete) lines.push(`the index is catching up (${answer.pending} changes not indexed yet): this answer may miss some records`)
  return lines.join('\n') + '\n'
}

export const searchCommand: Command = {
  name: 'search',
  usage: USAGE,
  async run (ctx) {
    return await guarded(ctx, USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { json: { type: 'boolean' }, scope: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } }
      })
      if (positionals.length === 0) throw new UsageError('search takes the words to look for')
      const params = new URLSearchParams({ q: positionals.join(' ') })
      for (const name of ['scope', 'since', 'until', 'limit', 'cursor'] as const) if (values[name] !== undefined) params.set(name, values[name])
      const answer = await callDaemon(ctx, { path: `/v1/search?${params.toString()}` }) as SearchAnswer
      if (values.json === true) writeJson(ctx, answer)
      else ctx.stdout.write(searchText(answer))
      return EXIT.OK
    })
  }
}
