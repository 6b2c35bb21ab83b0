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
    'usage: hearth [--home DIR] <command> [args]   (--home may also follow the command)',
    '       hearth --version | -v',
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

/**
 * The global --home option, before or after the command (`--home DIR` or `--home=DIR`, the last
 * one wins); arguments after `--` are the command's. A message when --home has no folder.
 */
export function takeHome (argv: readonly string[]): { home: string | undefined, args: string[] } | string {
  const args: string[] = []
  let home: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') { args.push(...argv.slice(i)); break }
    if (a === '--home' || a.startsWith('--home=')) {
      const value = a === '--home' ? argv[++i] : a.slice('--home='.length)
      if (value === undefined || value === '') return '--home needs a folder'
      home = value
    } else args.push(a)
  }
  return { home, args }
}

export async function main (argv: string[], io: MainIO = {}): Promise<number> {
  const env = io.env ?? process.env
  const stdout = io.stdout ?? process.stdout
  const stderr = io.stderr ?? process.stderr
  const stdin = io.stdin ?? process.stdin
  const global = takeHome(argv)
  if (typeof global === 'string') { stderr.write(`error INVALID_ARGUMENT: ${global}\n`); return EXIT.USAGE }
  const { args } = global
  const homeRoot = global.home === undefined ? defaultHomeRoot(env) : defaultHomeRoot({ HEARTH_HOME: global.home })
  const name = args.shift()
  if (name === '--version' || name === '-V' || name === '-v' || name === 'version') {
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
