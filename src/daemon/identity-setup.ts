// First start creates the owner identity (a fresh wallet) so `npm start` works on a new machine;
// later starts load it. The daemon never prints or logs key material, only the owner address.
import type { HomeLayout } from '../home.js'
import { createIdentity, identityExists, loadIdentity, type OwnerIdentity } from '../identity/identity.js'

export async function ensureIdentity (home: HomeLayout, print: (line: string) => void): Promise<OwnerIdentity> {
  if (await identityExists(home)) return await loadIdentity(home)
  const identity = await createIdentity(home, { fresh: true })
  print(`first start: created a new identity for owner ${identity.ownerAddress}`)
  print(`  its wallet key is in ${identity.file} (mode 0600) — back it up, or replace it with \`hearth init --force\``)
  return identity
}
