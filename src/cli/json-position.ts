// Where a JSON text stops being JSON, as a line and column, so `hearth put` can point at the
// mistake (V8's JSON.parse messages give a position for some errors and none for others).
// A bounded, iterative scan: no recursion, so hostile nesting costs nothing but a counter.

export interface JsonProblem { offset: number; line: number; column: number; message: string }

export function lineAndColumn (text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) { line++; lineStart = i + 1 }
  }
  return { line, column: offset - lineStart + 1 }
}

/** The first syntax error in `text`, or null when it is valid JSON. */
export function findJsonProblem (text: string): JsonProblem | null {
  let i = 0
  const n = text.length
  // what the scanner expects next; the stack holds the open containers ('{' or '[')
  const stack: string[] = []
  const fail = (message: string, at = i): JsonProblem => ({ offset: at, ...lineAndColumn(text, at), message })
  const ws = (): void => { while (i < n && ' \t\n\r'.includes(text[i]!)) i++ }
  const describe = (): string => i >= n ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[i])}`

  const scanString = (): JsonProblem | null => {
    i++ // opening quote
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 34) { i++; return null }
      if (c < 0x20) return fail('control character in a string (escape it)')
      if (c === 92) {
        const e = text[i + 1]
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('bad \\u escape')
          i += 6
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2
        else return fail('bad escape in a string')
      } else i++
    }
    return fail('unterminated string')
  }

  const scanValue = (): JsonProblem | 'open' | null => {
    ws()
    const c = text[i]
    if (c === '{' || c === '[') { stack.push(c); i++; return 'open' }
    if (c === '"') return scanString()
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) { i += word.length; return null }
    }
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (m !== null && m[0].length > 0 && m[0] !== '-') { i += m[0].length; return null }
    return fail(`${describe()} where a value was expected`)
  }

  // after a value: close containers or move to the next element
  const afterValue = (): JsonProblem | 'next' | 'done' => {
    for (;;) {
      ws()
      const top = stack[stack.length - 1]
      if (top === undefined) return i >= n ? 'done' : fail(`${describe()} after the end of the JSON value`)
      if (text[i] === ',') { i++; return 'next' }
      if ((top === '{' && text[i] === '}') || (top === '[' && text[i] === ']')) { stack.pop(); i++; continue }
      return fail(`${describe()}: expected "," or "${top === '{' ? '}' : ']'}"`)
    }
  }

  const memberKey = (): JsonProblem | null => {
    ws()
    if (text[i] !== '"') return fail(`${describe()}: expected a property name in double quotes`)
    const p = scanString()
    if (p !== null) return p
    ws()
    if (text[i] !== ':') return fail(`${describe()}: expected ":" after the property name`)
    i++
    return null
  }

  let r = scanValue()
  for (;;) {
    if (r !== null && r !== 'open') return r
    if (r === 'open') {
      ws()
      const top = stack[stack.length - 1]!
      if ((top === '{' && text[i] === '}') || (top === '[' && text[i] === ']')) { stack.pop(); i++ } else {
        if (top === '{') { const p = memberKey(); if (p !== null) return p }
        r = scanValue()
        continue
      }
    }
    const next = afterValue()
    if (next === 'done') return null
    if (typeof next !== 'string') return next
    if (stack[stack.length - 1] === '{') { const p = memberKey(); if (p !== null) return p }
    r = scanValue()
  }
}
