// The Go-built daemons the tests start (Kubo, IPFS Cluster): built once by their install scripts
// (scripts/go-install.sh) and started in a process group of their own, killed as a whole.
import { execFile, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const installs = new Map<string, Promise<string>>()

/** Runs scripts/<script> once per process (it builds only when the binary is missing); resolves to the binary. */
export async function installedTool (script: string): Promise<string> {
  let installing = installs.get(script)
  if (installing === undefined) {
    installing = promisify(execFile)('bash', [join(REPO_ROOT, 'scripts', script)], { cwd: REPO_ROOT, timeout: 60 * 60_000 })
      .then(({ stdout }) => {
        const bin = stdout.trim().split('\n').pop() ?? ''
        if (!existsSync(bin)) throw new Error(`scripts/${script} did not produce a binary (${bin})`)
        return bin
      })
    installs.set(script, installing)
  }
  return await installing
}

export function killGroup (proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return
  try { process.kill(-proc.pid, signal) } catch { /* already gone */ }
}

export async function sleep (ms: number): Promise<void> { await new Promise((resolve) => setTimeout(resolve, ms)) }
