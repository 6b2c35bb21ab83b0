// The chain: registry contracts (docs/protocol.md §2.5), file registration, schema knowledge and the dev chain.
export { dataRefinerRegistryAbi, dataRegistryAbi, multicall3Abi } from './abi.js'
export { CHAIN_PRESETS, CANONICAL_MULTICALL3, resolveChainConfig, type ChainConfig, type ChainPreset } from './config.js'
export {
  createChainClient, detectMulticall,
  type ChainClient, type ChainClientOptions, type ChainFile, type ChainHealth, type ChainSchema,
  type FileAddedEvent, type FileToRegister, type RegisterOptions, type RegistrationOutcome, type SchemaAddedEvent
} from './client.js'
export { startDevChain, DEV_CHAIN_ID, DEV_MNEMONIC, type DevChain, type StartDevChainOptions } from './dev-chain.js'
export {
  createRegistrationWorker, PARK_MS,
  type InFlightRegistration, type RegistrationCallbacks, type RegistrationJob, type RegistrationStatus,
  type RegistrationWorker, type RegistrationWorkerOptions
} from './registration-queue.js'
export { createChainSchemaResolver, parseSchemaId, type ChainSchemaResolver, type ChainSchemaResolverOptions } from './schema-resolver.js'
export {
  createSchemaRegistration,
  type SchemaRegistration, type SchemaRegistrationJob, type SchemaRegistrationOptions, type SchemaRegistrationState
} from './schema-registration.js'
