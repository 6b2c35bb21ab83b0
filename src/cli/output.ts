// What every command shares: argument errors, error printing with the stable code, exit codes,
// JSON output, and calls to the daemon that turn its error bodies back into HearthErrors.
import { HearthError, ERROR_CODES, type ErrorCode } from '../errors.js'
import { daemonRequest, type DaemonRequest, type DaemonResponse } from '../client/daemon-client.js'
import { EXIT, type CommandContext } from './command.js'

export class UsageError extends Error {}

function isParseArgsError (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}

/** node:util parseArgs's messages, said in Hearth's words (they name Node's syntax, not the command's). */
export function argumentProblem (err: Error): string {
  const code = (err as { code?: string }).code
  const option = /'(-[^' ]+)/.exec(err.message)?.[1]
  const given = /argument '([^']*)'|Unexpected argument '([^']*)'/.exec(err.message)
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    if (/ambiguous/.test(err.message)) return `${option} needs a value; a value starting with "-" is written ${option}=<value>`
    return `${option} needs a value`
  }
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) return `unknown option ${option}`
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument ${JSON.stringify(given?.[1] ?? given?.[2] ?? '')}`
  return err.message
}

/** Codes that mean "the arguments were wrong", whichever side found it (README "Exit codes"). */
const USAGE_CODES = new Set<string>(['INVALID_ARGUMENT', 'INVALID_SCOPE', 'INVALID_PATH', 'INVALID_JSON'])

export function exitCodeFor (err: HearthError): number {
  if (err.code === 'DAEMON_NOT_RUNNING') return EXIT.NOT_RUNNING
  if (USAGE_CODES.has(err.code)) return EXIT.USAGE
  if (err.status === 404) return EXIT.NOT_FOUND
  return EXIT.FAILURE
}

/** The list an error carries in its details (validator reasons, else configuration problems). */
function detailLines (details: Record<string, unknown> | undefined): string[] {
  const list = Array.isArray(details?.reasons) ? details.reasons : Array.isArray(details?.problems) ? details.problems : []
  return list.slice(0, 20).map((r: unknown) => {
    const text = typeof r === 'object' && r !== null && typeof (r as { message?: unknown }).message === 'string' ? (r as { message: string }).message : String(r)
    return `  - ${text}\n`
  })
}

/** Runs a command body; prints `error CODE: message` and maps the failure to an exit code. */
export async function guarded (ctx: CommandContext, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (err) {
    if (err instanceof UsageError || isParseArgsError(err)) {
      ctx.stderr.write(`error INVALID_ARGUMENT: ${err instanceof UsageError ? err.message : argumentProblem(err as Error)}\n${usage}\n`)
      return EXIT.USAGE
    }
    if (err instanceof HearthError) {
      ctx.stderr.write(`error ${err.code}: ${err.message}\n`)
      // reasons the message already says are not printed twice
      const lines = detailLines(err.details)
      if (!lines.every((line) => err.message.includes(line.slice(4, -1)))) for (const line of lines) ctx.stderr.write(line)
      return exitCodeFor(err)
    }
    ctx.stderr.write(`error INTERNAL: ${err instanceof Error ? err.message : String(err)}\n`)
    return EXIT.FAILURE
  }
}

export function writeJson (ctx: CommandContext, value: unknown): void {
  ctx.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

/** Rebuilds the daemon's error body (docs/protocol.md §3.5) as a HearthError. */
export function errorFromResponse (res: DaemonResponse): HearthError {
  const e = res.json?.error
  const code = typeof e?.errorCode === 'string' && e.errorCode in ERROR_CODES ? e.errorCode as ErrorCode : 'INTERNAL'
  const message = typeof e?.message === 'string' ? e.message : `daemon answered ${res.status}`
  return new HearthError(code, message, typeof e?.details === 'object' && e.details !== null ? e.details : undefined)
}

/** A daemon call that must succeed: returns the parsed body or throws the daemon's error. */
export async function callDaemon (ctx: CommandContext, req: DaemonRequest): Promise<any> {
  const res = await daemonRequest(ctx.home.socket, req)
  if (res.status >= 400) throw errorFromResponse(res)
  return res.json ?? res.body
}
