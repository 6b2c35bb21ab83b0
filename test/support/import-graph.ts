// The static import graph of our sources: what loading a module loads before any of its code runs.
// Dynamic `import()` and type-only imports are left out (they load nothing at that point), so a
// test can prove that a heavy library is reached only through a lazy import.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** Specifiers of the value imports and re-exports of `code` (not `import type`, not `import()`). */
export function staticImports (code: string): string[] {
  const found: string[] = []
  const patterns = [
    /^\s*(?:import|export)\s+(?!type\s)([\w\s{},*$]*?)\sfrom\s+['"]([^'"]+)['"]/gm,
    /^\s*import\s+()['"]([^'"]+)['"]/gm
  ]
  for (const pattern of patterns) {
    for (const [, clause, spec] of code.matchAll(pattern)) {
      // `import { type A, type B } from` loads nothing either
      const names = /^\s*\{([^}]*)\}\s*$/.exec(clause!)?.[1]
      if (names !== undefined && names.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type '))) continue
      found.push(spec!)
    }
  }
  return found
}

/** The package a bare specifier names (`@libp2p/tcp/x` → `@libp2p/tcp`), or null for node: and relative ones. */
function packageOf (spec: string): string | null {
  if (spec.startsWith('.') || spec.startsWith('node:')) return null
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/** Every source file and every package `entry` (a .ts file under src/) loads statically. */
export function staticGraph (entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const todo = [entry]
  while (todo.length > 0) {
    const file = todo.pop()!
    if (files.has(file)) continue
    files.add(file)
    for (const spec of staticImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) { todo.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts')); continue }
      const pkg = packageOf(spec)
      if (pkg !== null) packages.add(pkg)
    }
  }
  return { files, packages }
}
