// `hearth doctor`: check and repair a home with the daemon stopped (src/daemon/doctor.ts).
import { parseArgs } from 'node:util'
import { HearthError } from '../../errors.js'
import { silentLogger } from '../../log.js'
import { acquireDaemonLock } from '../../daemon/lock.js'
import { homeStorageDeps } from '../home-storage.js'
import { loadConfig } from '../../config/resolve.js'
import { doctorFailed, runDoctor } from '../../daemon/doctor.js'
import { EXIT, type Command } from '../command.js'
import { guarded, UsageError, writeJson } from '../output.js'

const USAGE = `usage: hearth doctor [--json]
  checks the home with the daemon stopped and repairs what it can: a damaged index database
  (LevelDB repair, or a new index when it is beyond repair: the next start indexes data/ again),
  an inconsistent index, stored ciphertexts that are missing or do not match their CID (fetched
  under the same CID from the owner's other devices this home knows, then from restore.gateways;
  else stored again from the plaintext file in data/), and the search index (built again from
  the stored versions when damaged or missing). Exit 0 when everything is sound or repaired,
  1 when something could not be repaired (listed, with what each device and gateway answered).`

export const doctorCommand: Command = {
  name: 'doctor',
  usage: USAGE,
  async run (ctx) {
    return await guarded(ctx, USAGE, async () => {
      const { values, positionals } = parseArgs({ args: ctx.args, allowPositionals: true, options: { json: { type: 'boolean' } } })
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`)
      const lock = await acquireDaemonLock(ctx.home.lock).catch((err: unknown) => {
        if (err instanceof HearthError && err.code === 'DAEMON_LOCKED') {
          throw new HearthError('DAEMON_LOCKED', 'stop the daemon before running hearth doctor (it repairs the home folder directly)', err.details)
        }
        throw err
      })
      try {
        const config = await loadConfig(ctx.home.config, ctx.env)
        const report = await runDoctor({
          home: ctx.home,
          storage: await homeStorageDeps.readBackend!(ctx.home),
          restore: config.restore,
          sync: config.sync,
          logger: silentLogger(),
          onProgress: (line) => { if (values.json !== true) ctx.stdout.write(`${line}\n`) }
        })
        if (values.json === true) writeJson(ctx, report)
        else {
          ctx.stdout.write(`index: ${report.index}${report.movedTo !== undefined ? ` (the damaged one is in ${report.movedTo})` : ''}\n`)
          ctx.stdout.write(`ciphertexts: ${report.checked} checked, ${report.restored.length} stored again, ${report.unrepairable.length} unrepairable\n`)
          for (const r of report.restored) {
            if (r.cid === r.oldCid) ctx.stdout.write(`  restored ${r.path}: ${r.cid} fetched again from ${r.from}\n`)
            else ctx.stdout.write(`  restored ${r.path}: ${r.oldCid} → ${r.cid} from ${r.from}${r.supersedes !== undefined ? ` (the next start registers the new CID; file id ${r.supersedes} is superseded)` : r.registered ? ' (its on-chain registration still names the old CID)' : ''}\n`)
          }
          for (const u of report.unrepairable) ctx.stdout.write(`  unrepairable ${u.path} (${u.cid}): ${u.reason}\n`)
          if (report.search !== null) ctx.stdout.write(`search index: ${report.search.state}, ${report.search.versions} versions, ${report.search.rows} record fields\n`)
          if (report.notIndexed > 0) ctx.stdout.write(`data files not indexed: ${report.notIndexed} (the next daemon start ingests them)\n`)
        }
        const failed = doctorFailed(report)
        if (failed !== null) {
          ctx.stderr.write(`error ${failed.code}: ${failed.message}\n`)
          return EXIT.FAILURE
        }
        return EXIT.OK
      } finally {
        await lock.release()
      }
    })
  }
}
