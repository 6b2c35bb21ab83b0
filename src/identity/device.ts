// What makes this device this device: its libp2p peer key belongs to one machine and one home.
// `identity/peer-key.device` records a stamp of both when the key is made; a key whose stamp
// does not match was copied from another device (say, with the whole identity/ folder), and two
// devices with one peer id cannot sync. Such a key is replaced by a fresh one and reported.
import { createHash } from 'node:crypto'
import { readFile, realpath } from 'node:fs/promises'
import { hostname } from 'node:os'

/** A stable id of the machine: systemd/dbus machine-id, else the host name. */
async function machineId (): Promise<string> {
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    const id = await readFile(file, 'utf8').then((t) => t.trim(), () => '')
    if (id !== '') return id
  }
  return `host:${hostname()}`
}

/** sha256 of machine id and the home folder's real path, hex. */
export async function deviceStamp (homeRoot: string): Promise<string> {
  const home = await realpath(homeRoot).catch(() => homeRoot)
  return createHash('sha256').update(`hearth-device:v1\0${await machineId()}\0${home}`).digest('hex')
}
