// Parsing the secrets a user hands to `hearth init`: a wallet private key, a BIP-39 mnemonic or a
// master signature, read from stdin or a file (never argv, which lands in shell history and ps).
// Error messages never quote the secret, not even the part that was wrong.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { HearthError } from '../errors.js'
import { addressOfPrivateKey, type Hex } from '../protocol/eth.js'

export const MAX_SECRET_BYTES = 64 * 1024

export type SecretSource = { stdin: NodeJS.ReadableStream } | { file: string }

/** The whole input with surrounding whitespace trimmed; INVALID_ARGUMENT when empty or too large. */
export async function readSecret (source: SecretSource): Promise<string> {
  let text: string
  if ('file' in source) {
    try {
      const bytes = await readFile(source.file)
      if (bytes.length > MAX_SECRET_BYTES) throw tooLarge()
      text = bytes.toString('utf8')
    } catch (err) {
      if (err instanceof HearthError) throw err
      const code = (err as NodeJS.ErrnoException).code
      throw new HearthError('FILE_UNREADABLE', `cannot read secret file ${source.file}: ${code ?? 'error'}`, { path: source.file, code })
    }
  } else {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of source.stdin) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array)
      size += buf.length
      if (size > MAX_SECRET_BYTES) throw tooLarge()
      chunks.push(buf)
    }
    text = Buffer.concat(chunks).toString('utf8')
  }
  const trimmed = text.trim()
  if (trimmed.length === 0) throw new HearthError('INVALID_ARGUMENT', 'the secret input is empty')
  return trimmed
}

/** A 32-byte secp256k1 private key as 0x-prefixed lowercase hex (0x optional on input). */
export function parsePrivateKey (input: string): Hex {
  const body = input.startsWith('0x') || input.startsWith('0X') ? input.slice(2) : input
  if (!/^[0-9a-fA-F]{64}$/.test(body)) {
    throw new HearthError('INVALID_IDENTITY', 'a private key is 32 bytes written as 64 hex characters (0x optional)', { reason: 'bad private key format' })
  }
  const key = `0x${body.toLowerCase()}` as Hex
  try {
    addressOfPrivateKey(key)
  } catch {
    throw new HearthError('INVALID_IDENTITY', 'the private key is outside the secp256k1 range', { reason: 'bad private key' })
  }
  return key
}

/**
 * The private key of the mnemonic's first account on the default path m/44'/60'/0'/0/0. The
 * mnemonic's BIP-39 checksum is checked first, since viem derives a (wrong) wallet from any words.
 * viem's HD wallet code loads only here (`hearth init --mnemonic`), never with the daemon.
 */
export async function privateKeyFromMnemonic (input: string): Promise<Hex> {
  const { english, mnemonicToAccount } = await import('viem/accounts')
  const mnemonic = normalizeMnemonic(input)
  const problem = mnemonicProblem(mnemonic, english)
  if (problem !== null) throw new HearthError('INVALID_IDENTITY', `invalid mnemonic: ${problem}`, { reason: problem })
  const key = mnemonicToAccount(mnemonic).getHdKey().privateKey
  if (key === null) throw new HearthError('INVALID_IDENTITY', 'the mnemonic gave no private key', { reason: 'no private key' })
  return `0x${Buffer.from(key).toString('hex')}` as Hex
}

export function normalizeMnemonic (input: string): string {
  return input.normalize('NFKD').trim().split(/\s+/).join(' ')
}

const WORD_COUNTS = [12, 15, 18, 21, 24]

/** Why `mnemonic` (normalised) is not a valid BIP-39 mnemonic of `wordlist` (viem's `english`), or null. */
export function mnemonicProblem (mnemonic: string, wordlist: readonly string[]): string | null {
  const words = mnemonic.split(' ')
  const wordIndex = new Map(wordlist.map((word, i) => [word, i]))
  if (!WORD_COUNTS.includes(words.length)) return `has ${words.length} word${words.length === 1 ? '' : 's'}; a BIP-39 mnemonic has 12, 15, 18, 21 or 24`
  const bits: string[] = []
  for (let i = 0; i < words.length; i++) {
    const index = wordIndex.get(words[i]!)
    if (index === undefined) return `word ${i + 1} is not in the English BIP-39 word list`
    bits.push(index.toString(2).padStart(11, '0'))
  }
  const all = bits.join('')
  const checksumBits = all.length / 33
  const entropyBits = all.length - checksumBits
  const entropy = Buffer.alloc(entropyBits / 8)
  for (let i = 0; i < entropy.length; i++) entropy[i] = parseInt(all.slice(i * 8, i * 8 + 8), 2)
  const hashBits = [...createHash('sha256').update(entropy).digest()].map((b) => b.toString(2).padStart(8, '0')).join('')
  return hashBits.slice(0, checksumBits) === all.slice(entropyBits) ? null : 'checksum does not match (a word is wrong or out of order)'
}

function tooLarge (): HearthError {
  return new HearthError('INVALID_ARGUMENT', `the secret input is larger than ${MAX_SECRET_BYTES} bytes`)
}
