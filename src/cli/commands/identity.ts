// `hearth init` and `hearth whoami`. Both work on the home folder directly (no daemon needed).
// Secrets are read from stdin (`-`) or a file, never taken from argv, where they would land in
// shell history and in `ps` output.
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { HearthError } from '../../errors.js'
import { createIdentity, identityExists, loadIdentity, type IdentityKind, type IdentitySource } from '../../identity/identity.js'
import { loadTxKey } from '../../identity/tx-key.js'
import { readSecret, type SecretSource } from '../../identity/wallet-input.js'
import { EXIT, type Command, type CommandContext } from '../command.js'
import { guarded, UsageError, writeJson } from '../output.js'

const INIT_USAGE = `usage: hearth init [source] [--force] [--json]
  sources (at most one; none = generate a fresh wallet):
    --private-key-file F | --private-key -     wallet private key (hex) from a file or stdin
    --mnemonic-file F    | --mnemonic -        BIP-39 mnemonic (first account, m/44'/60'/0'/0/0)
    --signature-file F   | --signature -       master signature of "vana-master-key-v1" (hex)
  --force   replace an existing identity (files encrypted under it become unreadable to the new
            one); asks to confirm on a terminal, keeps identity/identity.replaced-<time>.json
  --yes     confirm --force without asking (scripts)
  --json    print the result as JSON`

const WHOAMI_USAGE = `usage: hearth whoami [--json]
  prints the owner address of the identity in HEARTH_HOME`

const SECRET_KINDS = ['private-key', 'mnemonic', 'signature'] as const
type SecretKind = typeof SECRET_KINDS[number]

export const initCommand: Command = {
  name: 'init',
  summary: 'create the owner identity (from a wallet key, mnemonic, master signature, or a fresh wallet)',
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
      if (given.length > 1) throw new UsageError('give at most one identity source')

      let source: IdentitySource = { fresh: true }
      const chosen = given[0]
      if (chosen !== undefined) {
        const secret = await readSecret(chosen.from)
        source = chosen.kind === 'private-key'
          ? { privateKey: secret }
          : chosen.kind === 'mnemonic' ? { mnemonic: secret } : { signature: secret }
      }
      if (values.force && await identityExists(ctx.home)) {
        const current = await loadIdentity(ctx.home).then((i) => i.ownerAddress, () => 'an unreadable identity')
        await confirmReplace(ctx, current, values.yes, chosen?.label === 'stdin')
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
      if (identity.kind === 'fresh') {
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
  const interactive = (ctx.stdin as { isTTY?: boolean }).isTTY === true && !stdinTaken
  if (!interactive) {
    throw new HearthError('IDENTITY_EXISTS', `an identity (owner ${current}) exists; replacing it needs confirmation: run \`hearth init --force\` in a terminal, or add --yes`)
  }
  ctx.stderr.write(`This replaces the identity of owner ${current}. Files stored under it cannot be read with the new one.\n` +
    'A backup of the current identity is kept in the identity folder. Type "replace" to go on: ')
  const rl = createInterface({ input: ctx.stdin, terminal: false })
  let answer = ''
  for await (const line of rl) { answer = line.trim(); break }
  rl.close()
  if (answer !== 'replace') throw new HearthError('IDENTITY_EXISTS', 'not replaced: the identity is unchanged')
}

export const whoamiCommand: Command = {
  name: 'whoami',
  summary: 'print the owner address',
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
