// The command table, in the order `hearth help` lists them. Each command's module is imported
// only when that command runs (`load`), so `hearth --version`, `hearth help` and every command
// load just what they use, not the daemon's and every other command's dependencies.
import type { Command } from '../command.js'

export interface CommandEntry {
  name: string
  /** One line for `hearth help`. */
  summary: string
  load (): Promise<Command>
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'init', summary: 'create the owner identity (from a wallet key, mnemonic, master signature, or a fresh wallet)', load: async () => (await import('./identity.js')).initCommand },
  { name: 'whoami', summary: 'print the owner address', load: async () => (await import('./identity.js')).whoamiCommand },
  { name: 'identity', summary: 'export this identity for another device of the same owner', load: async () => (await import('./identity.js')).identityCommand },
  { name: 'daemon', summary: 'run the daemon in the foreground', load: async () => (await import('./daemon.js')).daemonCommand },
  { name: 'status', summary: 'show what the daemon holds and what is pending', load: async () => (await import('./status.js')).statusCommand },
  { name: 'ui', summary: 'print (and open) a one-time login link for the dashboard', load: async () => (await import('./ui.js')).uiCommand },
  { name: 'put', summary: 'store a JSON object as a new data file of a scope', load: async () => (await import('./data.js')).putCommand },
  { name: 'get', summary: 'print a stored envelope of a scope', load: async () => (await import('./data.js')).getCommand },
  { name: 'ls', summary: 'list scopes with their number of versions', load: async () => (await import('./data.js')).lsCommand },
  { name: 'versions', summary: 'list the versions of a scope with their state, CID and on-chain file id', load: async () => (await import('./data.js')).versionsCommand },
  { name: 'search', summary: 'find records in every stored version (words, prefix*, "phrases"; by scope and time)', load: async () => (await import('./search.js')).searchCommand },
  { name: 'rm', summary: 'delete the local data of a scope', load: async () => (await import('./data.js')).rmCommand },
  { name: 'schema', summary: 'add, list and show schema definitions', load: async () => (await import('./schema.js')).schemaCommand },
  { name: 'peers', summary: 'list the owner\'s other devices, or add one by address', load: async () => (await import('./sync.js')).peersCommand },
  { name: 'sync', summary: 'sync with connected devices now', load: async () => (await import('./sync.js')).syncCommand },
  { name: 'restore', summary: 'restore the data folder from the chain and storage', load: async () => (await import('./sync.js')).restoreCommand },
  { name: 'connectors', summary: 'list installed connectors and the scopes they produce', load: async () => (await import('./connectors.js')).connectorsCommand },
  { name: 'import', summary: 'import a platform export (zip or folder) with a connector', load: async () => (await import('./connectors.js')).importCommand },
  { name: 'builders', summary: 'list or register builders (third-party apps) the owner trusts', load: async () => (await import('./builders.js')).buildersCommand },
  { name: 'requests', summary: 'access requests of builders and assistants: list, approve or deny', load: async () => (await import('./builders.js')).requestsCommand },
  { name: 'grants', summary: 'grants given to builders: list or revoke', load: async () => (await import('./builders.js')).grantsCommand },
  { name: 'access-log', summary: 'every builder read and assistant tool call, and every refusal', load: async () => (await import('./builders.js')).accessLogCommand },
  { name: 'mcp', summary: 'MCP server on stdin/stdout for a local assistant (Claude Desktop, Cursor, VS Code)', load: async () => (await import('./assistants.js')).mcpCommand },
  { name: 'assistants', summary: 'assistants (MCP connections): list, show activity, narrow or revoke', load: async () => (await import('./assistants.js')).assistantsCommand },
  { name: 'login', summary: 'log in to the conversation/image service (email code or pasted token)', load: async () => (await import('./proxy.js')).loginCommand },
  { name: 'chat', summary: 'chat with a character (streams replies as they arrive)', load: async () => (await import('./proxy.js')).chatCommand },
  { name: 'conversations', summary: 'list conversations, or show the messages of one', load: async () => (await import('./proxy.js')).conversationsCommand },
  { name: 'image', summary: 'make an image; --wait shows progress and prints the downloaded files', load: async () => (await import('./proxy.js')).imageCommand },
  { name: 'images', summary: 'list image jobs and their downloaded files', load: async () => (await import('./proxy.js')).imagesCommand },
  { name: 'storage', summary: 'migrate stored ciphertext between the embedded and kubo backends; cat a CID', load: async () => { const [{ makeStorageCommand }, { homeStorageDeps }] = await Promise.all([import('./storage.js'), import('../home-storage.js')]); return makeStorageCommand(homeStorageDeps) } },
  { name: 'doctor', summary: 'check and repair the index and the stored ciphertexts (daemon stopped)', load: async () => (await import('./doctor.js')).doctorCommand },
  { name: 'config', summary: 'show the effective configuration, or change config.json (set/unset)', load: async () => (await import('./config.js')).configCommand }
]
