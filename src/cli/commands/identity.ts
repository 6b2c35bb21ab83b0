// `hearth init` and `hearth whoami`. Both work on the home folder directly (no daemon needed).
// Secrets are read from stdin (`-`) or a file, never taken from argv, where they would land in
// shell history and in `ps` output.
import { parseArgs } from 'node:util'
import { HearthError } from '../../errors.js'
import { deviceExport, parseDeviceExport, type DeviceExport } from '../../identity/device-export.js'
import { chmod, writeFile } from 'node:fs/promises'
import { masterKeyFromSignature } from '../../protocol/keys.js'
import { createIdentity, identityExists, loadIdentity, type IdentityKind, type IdentitySource } from '../../identity/identity.js'
import { loadTxKey } from '../../identity/tx-key.js'
import { readSecret, type SecretSource } from '../../identity/wallet-input.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { guarded, UsageError, writeJson } from '../output.js'
import { isInteractive, readAnswer } from '../confirm.js'

const INIT_USAGE = `usage: hearth init [source] [--force] [--json]
  sources (at most one; none = generate a fresh wallet):
    --private-key-file F | --private-key -     wallet private key (hex) from a file or stdin
    --mnemonic-file F    | --mnemonic -        BIP-39 mnemonic (first account, m/44'/60'/0'/0/0)
    --signature-file F   | --signature -       master signature of "vana-master-key-v1" (hex)
    --from F             | --from -            another device's \`hearth identity export --for-device\` file
                                               (adding a device: same owner, its own peer id)
  --force   replace an existing identity (files encrypted under it become unreadable to the new
            one); asks to confirm on a terminal, keeps identity/identity.replaced-<time>.json
  --yes     confirm --force without asking (scripts)
  --json    print the result as JSON`

const WHOAMI_USAGE = `usage: hearth whoami [--json]
  prints the owner address of the identity in HEARTH_HOME`

const SECRET_KINDS = ['private-key', 'mnemonic', 'signature'] as const
type SecretKind = typeof SECRET_KINDS[number] | 'from'

export const initCommand: Command = {
  name: 'init',
  usage: INIT_USAGE,
  async run (ctx) {
    return await guarded(ctx, INIT_USAGE, async () => {
      const { values } = parseArgs({
        args: ctx.args,
        options: {
          'private-key': { type: 'string' },
          'private-key-file': { type: 'string' },
          mnemonic: { type: 'string' },
          'mnemonic-file': { type: 'string' },
          signature: { type: 'string' },
          'signature-file': { type: 'string' },
          from: { type: 'string' },
          force: { type: 'boolean', default: false },
          yes: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          help: { type: 'boolean', short: 'h', default: false }
        },
        strict: true,
        allowPositionals: false
      })
      if (values.help === true) { ctx.stdout.write(INIT_USAGE + '\n'); return EXIT.OK }

      const given: Array<{ kind: SecretKind, from: SecretSource, label: string }> = []
      for (const kind of SECRET_KINDS) {
        const inline = values[kind]
        const file = values[`${kind}-file`]
        if (inline !== undefined) {
          if (inline !== '-') {
            throw new UsageError(`--${kind} takes only "-" (read stdin); secrets on the command line end up in shell history — use --${kind}-file F or --${kind} -`)
          }
          given.push({ kind, from: { stdin: ctx.stdin }, label: 'stdin' })
        }
        if (file !== undefined) given.push({ kind, from: { file }, label: file })
      }
      if (values.from !== undefined) given.push({ kind: 'from', from: values.from === '-' ? { stdin: ctx.stdin } : { file: values.from }, label: values.from === '-' ? 'stdin' : values.from })
      if (given.length > 1) throw new UsageError('give at most one identity source')

      let source: IdentitySource = { fresh: true }
      let exported: DeviceExport | null = null
      const chosen = given[0]
      if (chosen !== undefined) {
        const secret = await readSecret(chosen.from)
        if (chosen.kind === 'from') {
          exported = parseDeviceExport(secret, chosen.label)
          source = { signature: exported.signature }
        } else {
          source = chosen.kind === 'private-key'
            ? { privateKey: secret }
            : chosen.kind === 'mnemonic' ? { mnemonic: secret } : { signature: secret }
        }
      }
      if (values.force && await identityExists(ctx.home)) {
        const current = await loadIdentity(ctx.home).then((i) => i.ownerAddress, () => 'an unreadable identity')
        await confirmReplace(ctx, current, values.yes, chosen?.label === 'stdin')
      }
      if (exported !== null) {
        // the signature must be the owner's the export names, before anything is written
        const { ownerAddress } = await masterKeyFromSignature(exported.signature)
        if (ownerAddress.toLowerCase() !== exported.ownerAddress.toLowerCase()) throw new HearthError('INVALID_IDENTITY', `${chosen!.label}: the signature does not belong to ${exported.ownerAddress}`)
      }
      const identity = await createIdentity(ctx.home, source, { force: values.force })
      const hasOwnerPrivateKey = identity.ownerPrivateKey !== undefined
      if (values.json === true) {
        writeJson(ctx, { ownerAddress: identity.ownerAddress, kind: identity.kind, identityFile: identity.file, hasOwnerPrivateKey })
        return EXIT.OK
      }
      const lines = [
        `identity created for owner ${identity.ownerAddress}`,
        `  from      ${describeKind(identity.kind)}${chosen !== undefined ? ` (${chosen.label})` : ''}`,
        `  stored in ${identity.file} (mode 0600)`
      ]
      if (exported !== null) {
        lines.push('this device joins the owner\'s devices with its own peer id; start it with `hearth daemon` and add it on the other device with `hearth peers add <address>` (or let mDNS find it on the LAN)')
      } else if (identity.kind === 'fresh') {
        lines.push('a new wallet was generated; its private key is only in that file — back it up')
      } else if (!hasOwnerPrivateKey) {
        lines.push('only the master signature is stored; the wallet key stays with you')
      }
      if (identity.replacedBackup !== undefined) lines.push(`the replaced identity is kept in ${identity.replacedBackup} (mode 0600)`)
      ctx.stdout.write(lines.join('\n') + '\n')
      return EXIT.OK
    })
  }
}

/**
 * Replacing an identity can destroy the only copy of a wallet key and makes every stored file
 * unreadable to the new one: a person confirms at the terminal, a script says --yes.
 */
async function confirmReplace (ctx: CommandContext, current: string, yes: boolean, stdinTaken: boolean): Promise<void> {
  if (yes) return
  const interactive = isInteractive(ctx) && !stdinTaken
  if (!interactive) {
    throw new HearthError('IDENTITY_EXISTS', `an identity (owner ${current}) exists; replacing it needs confirmation: run \`hearth init --force\` in a terminal, or add --yes`)
  }
  ctx.stderr.write(`This replaces the identity of owner ${current}. Files stored under it cannot be read with the new one.\n` +
    'A backup of the current identity is kept in the identity folder. Type "replace" to go on: ')
  if (await readAnswer(ctx) !== 'replace') throw new HearthError('IDENTITY_EXISTS', 'not replaced: the identity is unchanged')
}

export const whoamiCommand: Command = {
  name: 'whoami',
  usage: WHOAMI_USAGE,
  async run (ctx) {
    return await guarded(ctx, WHOAMI_USAGE, async () => {
      const { values } = parseArgs({
        args: ctx.args,
        options: {
          json: { type: 'boolean', default: false },
          help: { type: 'boolean', short: 'h', default: false }
        },
        strict: true,
        allowPositionals: false
      })
      if (values.help === true) { ctx.stdout.write(WHOAMI_USAGE + '\n'); return EXIT.OK }
      const identity = await loadIdentity(ctx.home)
      if (values.json === true) {
        const txKey = await loadTxKey(ctx.home)
        writeJson(ctx, {
          ownerAddress: identity.ownerAddress,
          kind: identity.kind,
          identityFile: identity.file,
          createdAt: identity.createdAt,
          hasOwnerPrivateKey: identity.ownerPrivateKey !== undefined,
          txAddress: txKey?.address ?? null
        })
      } else {
        ctx.stdout.write(identity.ownerAddress + '\n')
      }
      return EXIT.OK
    })
  }
}

function describeKind (kind: IdentityKind): string {
  switch (kind) {
    case 'private-key': return 'wallet private key'
    case 'mnemonic': return 'mnemonic'
    case 'signature': return 'master signature'
    case 'fresh': return 'a freshly generated wallet'
  }
}

const IDENTITY_USAGE = `usage: hearth identity export --for-device --out FILE [--force]
  writes what another device of this owner needs (owner address and master signature; never the
  wallet key, this device's peer key, transaction key or tokens) to FILE (mode 0600). On the new
  device: hearth init --from FILE. Whoever has the file can read every stored file: move it
  privately and delete it afterwards.`

export const identityCommand: Command = {
  name: 'identity',
  usage: IDENTITY_USAGE,
  async run (ctx) {
    return await guarded(ctx, IDENTITY_USAGE, async () => {
      const { values, positionals } = parseArgs({
        args: ctx.args,
        allowPositionals: true,
        options: { 'for-device': { type: 'boolean', default: false }, out: { type: 'string' }, force: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } }
      })
      if (positionals[0] !== 'export' || positionals.length !== 1) throw new UsageError('identity takes export')
      if (!values['for-device']) throw new UsageError('say what the export is for: --for-device (the only kind there is)')
      if (values.out === undefined) throw new UsageError('--out FILE is required (the export is a secret: it never goes to the terminal)')
      const identity = await loadIdentity(ctx.home)
      // 0600 from the first byte; the folder is the user's choice and is left as it is
      try {
        await writeFile(values.out, JSON.stringify(deviceExport(identity), null, 2) + '\n', { mode: 0o600, flag: values.force ? 'w' : 'wx' })
        await chmod(values.out, 0o600)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new HearthError('CONFLICT', `${values.out} exists; choose another file or add --force`)
        throw new HearthError('FILE_UNREADABLE', `cannot write ${values.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
      }
      if (values.json) writeJson(ctx, { ownerAddress: identity.ownerAddress, file: values.out })
      else ctx.stdout.write(`exported owner ${identity.ownerAddress} for another device to ${values.out} (mode 0600)\n  on the new device: hearth init --from ${values.out}\n  the file reads every stored file: move it privately, then delete it\n`)
      return EXIT.OK
    })
  }
}
