// Confirmation of a destructive command: asked at a terminal, skipped with --yes, refused when
// stdin is not a terminal (a script must say --yes; it cannot answer a question).
import { createInterface } from 'node:readline'
import { HearthError } from '../errors.js'
import type { CommandContext } from './command.js'

export function isInteractive (ctx: Pick<CommandContext, 'stdin'>): boolean {
  return (ctx.stdin as { isTTY?: boolean }).isTTY === true
}

/** The first line typed on stdin, trimmed ('' at end of input). */
export async function readAnswer (ctx: Pick<CommandContext, 'stdin'>): Promise<string> {
  const rl = createInterface({ input: ctx.stdin, terminal: false })
  try {
    for await (const line of rl) return line.trim()
    return ''
  } finally {
    rl.close()
  }
}

/**
 * Asks `question` (ending in "[y/N]") unless `yes`; resolves when confirmed, throws
 * INVALID_ARGUMENT naming `--yes` when stdin is not a terminal and CONFLICT when the answer is no.
 */
export async function confirmOrRefuse (ctx: Pick<CommandContext, 'stdin' | 'stderr'>, opts: { yes: boolean; question: string; command: string; declined: string }): Promise<void> {
  if (opts.yes) return
  if (!isInteractive(ctx)) throw new HearthError('INVALID_ARGUMENT', `${opts.command} needs confirmation: run it in a terminal, or add --yes`)
  ctx.stderr.write(`${opts.question} [y/N] `)
  const answer = (await readAnswer(ctx)).toLowerCase()
  if (answer !== 'y' && answer !== 'yes') throw new HearthError('CONFLICT', opts.declined)
}
