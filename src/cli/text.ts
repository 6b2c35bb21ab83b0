// Plain-text rendering of the daemon's JSON answers for people: nested objects become indented
// `label: value` lines, lists of scalars one comma-separated line, lists of objects one line
// each. No braces or quotes reach the terminal; `--json` is there for machines.

function label (key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
}

function scalar (v: unknown, key = ''): string {
  if (v === null || v === undefined) return '-'
  // ms since epoch under an `…At` key is a moment: show it as one
  if (typeof v === 'number' && /At$/.test(key) && v > 1e12 && v < 1e14) return new Date(v).toISOString()
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  return String(v)
}

function isScalar (v: unknown): boolean {
  return v === null || typeof v !== 'object'
}

/** One line for a small object whose values are all scalars: `a 1, b 2`. */
function inline (o: Record<string, unknown>): string {
  return Object.entries(o).map(([k, v]) => `${label(k)} ${scalar(v, k)}`).join(', ')
}

export function renderTree (value: unknown, indent = '  ', maxItems = 20): string {
  if (isScalar(value)) return `${indent}${scalar(value)}\n`
  let out = ''
  if (Array.isArray(value)) {
    for (const item of value.slice(0, maxItems)) {
      if (isScalar(item)) out += `${indent}- ${scalar(item)}\n`
      else if (!Array.isArray(item) && Object.values(item as object).every(isScalar)) out += `${indent}- ${inline(item as Record<string, unknown>)}\n`
      else out += `${indent}-\n${renderTree(item, indent + '    ', maxItems)}`
    }
    if (value.length > maxItems) out += `${indent}… and ${value.length - maxItems} more\n`
    return out
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isScalar(v)) out += `${indent}${label(k)}: ${scalar(v, k)}\n`
    else if (Array.isArray(v) && v.length === 0) out += `${indent}${label(k)}: none\n`
    else if (Array.isArray(v) && v.every(isScalar)) out += `${indent}${label(k)}: ${v.map((x) => scalar(x)).join(', ')}\n`
    else if (!Array.isArray(v) && Object.keys(v as object).length === 0) out += `${indent}${label(k)}: -\n`
    else if (!Array.isArray(v) && Object.values(v as object).every(isScalar) && Object.keys(v as object).length <= 6) out += `${indent}${label(k)}: ${inline(v as Record<string, unknown>)}\n`
    else out += `${indent}${label(k)}:\n${renderTree(v, indent + '  ', maxItems)}`
  }
  return out
}

/** `1 file`, `3 files`: a count with its noun, plural when it is not one. */
export function plural (n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`
}
