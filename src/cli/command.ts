// The contract every CLI command implements. commands/index.ts holds the table of commands (name,
// summary, how to load it); each command parses its own arguments (node:util parseArgs) and
// talks to the daemon through client.ts.
import type { HomeLayout } from '../home.js'

/** Documented exit codes (README "Exit codes"). */
export const EXIT = {
  OK: 0,
  FAILURE: 1,        // the operation failed (the message says why, with its error code)
  USAGE: 2,          // bad arguments
  NOT_RUNNING: 3,    // the command needs the daemon and it is not running
  NOT_FOUND: 4       // the thing asked for does not exist
} as const

export interface CommandContext {
  home: HomeLayout
  /** Arguments after the command name (and after a subcommand for grouped commands). */
  args: string[]
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  stdin: NodeJS.ReadableStream
  env: NodeJS.ProcessEnv
}

export interface Command {
  name: string
  usage: string
  run (ctx: CommandContext): Promise<number>
}
