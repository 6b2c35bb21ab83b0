// Prints the configuration table for the README, or with --write rewrites it in README.md.
// Run: node --import tsx scripts/config-table.ts --write
import { readFile, writeFile } from 'node:fs/promises'
import { configTableMarkdown, withConfigTable } from '../src/config/table.js'

const readmePath = new URL('../README.md', import.meta.url)
if (process.argv.includes('--write')) {
  await writeFile(readmePath, withConfigTable(await readFile(readmePath, 'utf8')))
} else {
  process.stdout.write(configTableMarkdown() + '\n')
}
