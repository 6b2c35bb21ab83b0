// `hearth <command> [args]`: the table of commands and the global --home option.
import { homeLayout, defaultHomeRoot } from '../home.js'
import { EXIT, type CommandContext } from './command.js'
import { COMMANDS, type CommandEntry } from './commands/index.js'
import { HEARTH_VERSION } from '../version.js'

export interface MainIO {
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
  stdin?: NodeJS.ReadableStream
  env?: NodeJS.ProcessEnv
}

function help (commands: readonly CommandEntry[]): string {
  const width = Math.max(...commands.map((c) => c.name.length))
  return [
    'usage: hearth [--home DIR] <command> [args]',
    '       hearth --version',
    '',
    'HEARTH_HOME (default ~/.hearth) or --home selects the home folder.',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'hearth <command> --help shows the usage of a command.',
    'exit codes: 0 ok, 1 failed, 2 bad arguments, 3 daemon not running, 4 not found'
  ].join('\n') + '\n'
}

export async function main (argv: string[], io: MainIO = {}): Promise<number> {
  const env = io.env ?? process.env
  const stdout = io.stdout ?? process.stdout
  const stderr = io.stderr ?? process.stderr
  const stdin = io.stdin ?? process.stdin
  const args = [...argv]
  let homeRoot = defaultHomeRoot(env)
  while (args[0] === '--home') {
    if (args[1] === undefined) { stderr.write('error INVALID_ARGUMENT: --home needs a folder\n'); return EXIT.USAGE }
    homeRoot = defaultHomeRoot({ HEARTH_HOME: args[1] })
    args.splice(0, 2)
  }
  const name = args.shift()
  if (name === '--version' || name === '-V' || name === 'version') {
    stdout.write(`hearth ${HEARTH_VERSION}\n`)
    return EXIT.OK
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    stdout.write(help(COMMANDS))
    return name === undefined ? EXIT.USAGE : EXIT.OK
  }
  const entry = COMMANDS.find((c) => c.name === name)
  if (entry === undefined) {
    stderr.write(`error INVALID_ARGUMENT: unknown command ${JSON.stringify(name)}\n${help(COMMANDS)}`)
    return EXIT.USAGE
  }
  const command = await entry.load()
  if (args.includes('--help') || args.includes('-h')) { stdout.write(command.usage + '\n'); return EXIT.OK }
  const ctx: CommandContext = { home: homeLayout(homeRoot), args, stdout, stderr, stdin, env: { ...env, HEARTH_HOME: homeRoot } }
  return await command.run(ctx)
}
