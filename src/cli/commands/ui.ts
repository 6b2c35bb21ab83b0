// `hearth ui`: a one-time login link for the dashboard, printed, and opened in the browser when
// there is a desktop to open it on. The link works once, for a few minutes, and only on this
// computer (the dashboard listens on loopback); it sets an HttpOnly session cookie.
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'
import { EXIT, type Command } from '../command.js'
import { callDaemon, guarded, UsageError, writeJson } from '../output.js'

const UI_USAGE = 'usage: hearth ui [--no-open] [--json]\n  prints a one-time login link for the dashboard and opens it in the browser when there is a desktop'

/** The desktop's "open this URL" command, or null on a machine without a desktop session. */
export function opener (env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'darwin') return 'open'
  if (platform === 'win32') return null
  return env.DISPLAY !== undefined || env.WAYLAND_DISPLAY !== undefined ? 'xdg-open' : null
}

export const uiCommand: Command = {
  name: 'ui',
  usage: UI_USAGE,
  async run (ctx) {
    return await guarded(ctx, UI_USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' }, 'no-open': { type: 'boolean' } } })
      if (positionals.length > 0) throw new UsageError('ui takes no arguments')
      const link = await callDaemon(ctx, { method: 'POST', path: '/v1/ui/login-link' }) as { url: string; expiresAt: string }
      const command = values['no-open'] === true ? null : opener(ctx.env)
      if (command !== null) {
        // a missing opener is no failure: the link is printed either way
        const child = spawn(command, [link.url], { detached: true, stdio: 'ignore' })
        child.on('error', () => {})
        child.unref()
      }
      if (values.json === true) { writeJson(ctx, { ...link, opened: command !== null }); return EXIT.OK }
      ctx.stdout.write(`${link.url}\n`)
      ctx.stderr.write(`open this link in a browser on this computer; it logs you in once and expires at ${link.expiresAt}${command !== null ? ' (opening it now)' : ''}\n`)
      return EXIT.OK
    })
  }
}
