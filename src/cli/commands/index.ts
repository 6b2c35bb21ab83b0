// The command table, in the order `hearth help` lists them.
import type { Command } from '../command.js'
import { identityCommand, initCommand, whoamiCommand } from './identity.js'
import { daemonCommand } from './daemon.js'
import { statusCommand } from './status.js'
import { configCommand } from './config.js'
import { schemaCommand } from './schema.js'
import { connectorsCommand, importCommand } from './connectors.js'
import { PROXY_COMMANDS } from './proxy.js'
import { peersCommand, syncCommand, restoreCommand } from './sync.js'
import { makeStorageCommand } from './storage.js'
import { homeStorageDeps } from '../home-storage.js'
import { uiCommand } from './ui.js'
import { doctorCommand } from './doctor.js'
import { buildersCommand, requestsCommand, grantsCommand, accessLogCommand } from './builders.js'
import { putCommand, getCommand, lsCommand, versionsCommand, rmCommand } from './data.js'

export const COMMANDS: readonly Command[] = [
  initCommand,
  whoamiCommand,
  identityCommand,
  daemonCommand,
  statusCommand,
  uiCommand,
  putCommand,
  getCommand,
  lsCommand,
  versionsCommand,
  rmCommand,
  schemaCommand,
  peersCommand,
  syncCommand,
  restoreCommand,
  connectorsCommand,
  importCommand,
  buildersCommand,
  requestsCommand,
  grantsCommand,
  accessLogCommand,
  ...PROXY_COMMANDS,
  makeStorageCommand(homeStorageDeps),
  doctorCommand,
  configCommand
]
