// `hearth daemon`: runs the daemon in the foreground until SIGINT/SIGTERM.
import { parseArgs } from 'node:util'
import { loadConfigWithSources } from '../../config/resolve.js'
import { launchDaemon } from '../../daemon/daemon.js'
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
      // from here a signal stops the daemon, also while its parts are still starting
      let onSignal: (signal: NodeJS.Signals) => void = () => {}
      const signalled = new Promise<NodeJS.Signals>((resolve) => { onSignal = resolve })
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      try {
        const daemon = await launchDaemon({ home: ctx.home, config, configSources: sources, configAmbient: { env: ctx.env, sets }, logger, env: ctx.env, print })
        // runs until a signal, or until a part fails to start behind /health
        const startFailed = daemon.ready.then(async () => await new Promise<never>(() => {}), (err: unknown) => ({ err }))
        const outcome = await Promise.race([signalled.then((signal) => ({ signal })), startFailed])
        if ('signal' in outcome) print(`${outcome.signal}: shutting down`)
        await daemon.stop()
        if ('err' in outcome) throw outcome.err
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
      print('stopped')
      return EXIT.OK
    })
  }
}
