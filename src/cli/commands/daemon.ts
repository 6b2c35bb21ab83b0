// `hearth daemon`: runs the daemon in the foreground until SIGINT/SIGTERM.
import { parseArgs } from 'node:util'
import { loadConfigWithSources } from '../../config/resolve.js'
import { startDaemon } from '../../daemon/daemon.js'
import { createLogger } from '../../log.js'
import { EXIT, type Command } from '../command.js'
import { guarded } from '../output.js'
import { HEARTH_VERSION } from '../../version.js'

const USAGE = `usage: hearth daemon [--set path=value ...] [--dev-chain]
  runs the daemon in the foreground (config: <home>/config.json, HEARTH_* variables, --set)
  --dev-chain   start a local anvil chain with the registry contracts and use it`

export const daemonCommand: Command = {
  name: 'daemon',
  usage: USAGE,
  async run (ctx) {
    return await guarded(ctx, USAGE, async () => {
      const { values } = parseArgs({ args: ctx.args, options: { set: { type: 'string', multiple: true }, 'dev-chain': { type: 'boolean' } } })
      const sets = [...(values.set ?? [])]
      if (values['dev-chain'] === true) sets.push('chain.preset="dev"')
      const { config, sources } = await loadConfigWithSources(ctx.home.config, ctx.env, sets)
      const logger = createLogger({ level: config.logLevel, format: config.logFormat })
      const print = (line: string): void => { ctx.stdout.write(line + '\n') }
      print(`hearth ${HEARTH_VERSION} (node ${process.versions.node}), home ${ctx.home.root}`)
      const daemon = await startDaemon({ home: ctx.home, config, configSources: sources, configAmbient: { env: ctx.env, sets }, logger, env: ctx.env, print })
      await new Promise<void>((resolve) => {
        const onSignal = (signal: NodeJS.Signals): void => {
          print(`${signal}: shutting down`)
          process.off('SIGINT', onSignal)
          process.off('SIGTERM', onSignal)
          resolve()
        }
        process.on('SIGINT', onSignal)
        process.on('SIGTERM', onSignal)
      })
      await daemon.stop()
      print('stopped')
      return EXIT.OK
    })
  }
}
