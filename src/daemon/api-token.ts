// The bearer token of the optional loopback TCP listener: random, 0600, created on first use.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { HomeLayout } from '../home.js'
import { ensureSecretDir, readSecretFile, writeSecretFile } from '../identity/secret-files.js'

export function apiTokenFile (home: Pick<HomeLayout, 'identity'>): string {
  return join(home.identity, 'api-token')
}

export async function loadOrCreateApiToken (home: Pick<HomeLayout, 'identity'>): Promise<string> {
  const file = apiTokenFile(home)
  const existing = await readSecretFile(file)
  if (existing !== null && existing.trim().length >= 32) return existing.trim()
  await ensureSecretDir(home.identity)
  const token = randomBytes(32).toString('base64url')
  await writeSecretFile(file, token + '\n', 'replace')
  return token
}
