// `String.prototype.localeCompare` without ICU's collator for the strings libp2p sorts. Its peer
// store sorts protocol names, metadata keys and multiaddrs with `a.localeCompare(b)` on every
// write, the first of them while the node starts (its own protocols and identify's agent version);
// the first call builds ICU's collator, which maps ~2.9 MB of collation data from the node binary
// and keeps it resident for the life of the process (README, "Idle memory"). Nothing of Hearth's
// compares strings by locale.
//
// For the default locale's collation (CLDR root, which English uses untailored) and strings of
// printable ASCII, the order is simple and computed here, exactly: every character has one primary
// weight (ASCII_ORDER), letters compare case-blind first; strings equal that way are told apart by
// case, the first lowercase letter against an uppercase one sorting first. Anything else — other
// characters, an explicit locale or options, a process whose locale is not English, C or POSIX —
// goes to the original. test/sync/ascii-collation.test.ts checks the result against ICU's own.

/** Printable ASCII (letters lowercase) in the root collation's order. */
const ASCII_ORDER = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz'

/** Primary rank by char code (0: not handled here); uppercase letters share their lowercase's. */
const RANK = new Uint8Array(128)
for (let i = 0; i < ASCII_ORDER.length; i++) RANK[ASCII_ORDER.charCodeAt(i)] = i + 1
for (let c = 0x41; c <= 0x5a; c++) RANK[c] = RANK[c + 0x20]!

const A = 0x41
const Z = 0x5a

/** -1, 0 or 1 as ICU's root collation orders `a` and `b`; null when a character is not printable ASCII. */
export function compareAscii (a: string, b: string): number | null {
  const n = Math.min(a.length, b.length)
  let caseOrder = 0
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    const rx = x < 128 ? RANK[x]! : 0
    const ry = y < 128 ? RANK[y]! : 0
    if (rx === 0 || ry === 0) return null
    if (rx !== ry) return checked(a, b, i + 1, rx < ry ? -1 : 1)
    // the same letter in two cases: lowercase first, decided only if nothing else differs
    if (caseOrder === 0 && x !== y) caseOrder = x >= A && x <= Z ? 1 : -1
  }
  if (a.length !== b.length) return checked(a, b, n, a.length < b.length ? -1 : 1)
  return caseOrder
}

/** `order`, once the characters from `from` on are known to be handled here too. */
function checked (a: string, b: string, from: number, order: number): number | null {
  for (const s of [a, b]) {
    for (let i = from; i < s.length; i++) {
      const c = s.charCodeAt(i)
      if (c >= 128 || RANK[c] === 0) return null
    }
  }
  return order
}

/** Whether the process's default locale collates as CLDR root (ICU takes it from these variables). */
export function rootCollationLocale (env: NodeJS.ProcessEnv = process.env): boolean {
  return ['LC_ALL', 'LC_MESSAGES', 'LANG'].every((name) => {
    const id = env[name]
    return id === undefined || id === '' || /^(?:C|POSIX|en)(?:[._@-]|$)/.test(id)
  })
}

const INSTALLED = Symbol.for('hearth.asciiLocaleCompare')

/**
 * Replaces `String.prototype.localeCompare` (once per process) with one that answers printable
 * ASCII without ICU, when the default locale collates as root; no-op otherwise.
 */
export function installAsciiLocaleCompare (env: NodeJS.ProcessEnv = process.env): void {
  const current = String.prototype.localeCompare as typeof String.prototype.localeCompare & { [INSTALLED]?: true }
  if (current[INSTALLED] === true || !rootCollationLocale(env)) return
  const original = current
  const localeCompare = function (this: unknown, that: string, locales?: string | string[], options?: Intl.CollatorOptions): number {
    if (typeof this === 'string' && typeof that === 'string' && locales === undefined && options === undefined) {
      const order = compareAscii(this, that)
      if (order !== null) return order
    }
    return original.call(this, that, locales, options)
  }
  Object.defineProperty(localeCompare, INSTALLED, { value: true })
  Object.defineProperty(String.prototype, 'localeCompare', { value: localeCompare, writable: true, configurable: true, enumerable: false })
}
