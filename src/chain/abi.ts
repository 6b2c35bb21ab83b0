// The ABIs Hearth uses to talk to the registry contracts (docs/protocol.md §2.5). These describe the
// deployed Vana contracts, so they are written out here rather than taken from the compiler
// output of our dev-chain stand-ins; a test checks that the stand-ins match them.
import { parseAbi } from 'viem'

export const dataRefinerRegistryAbi = parseAbi([
  'struct SchemaInfo { string name; string dialect; string definitionUrl; }',
  'function addSchema(string name, string dialect, string definitionUrl) returns (uint256)',
  'function schemas(uint256 schemaId) view returns (SchemaInfo)',
  'function schemasCount() view returns (uint256)',
  'function isValidSchemaId(uint256 schemaId) view returns (bool)',
  'event SchemaAdded(uint256 indexed schemaId, string name, string dialect, string definitionUrl)',
  'error InvalidSchemaId(uint256 schemaId)'
])

export const dataRegistryAbi = parseAbi([
  'struct Permission { address account; string key; }',
  'struct FileResponse { uint256 id; address ownerAddress; string url; uint256 schemaId; uint256 addedAtBlock; }',
  'function addFileWithSchema(string url, uint256 schemaId) returns (uint256)',
  'function addFileWithPermissionsAndSchema(string url, address ownerAddress, Permission[] permissions, uint256 schemaId) returns (uint256)',
  'function files(uint256 fileId) view returns (FileResponse)',
  'function fileIdByUrl(string url) view returns (uint256)',
  'function filesCount() view returns (uint256)',
  'event FileAddedV2(uint256 indexed fileId, address indexed ownerAddress, string url, uint256 schemaId)',
  'error FileUrlAlreadyUsed()',
  // Raised through the schema check when a file names a schema the refiner registry lacks.
  'error InvalidSchemaId(uint256 schemaId)'
])

export const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)'
])

/** Every custom error the registries and the builder contracts can raise, for decoding revert data from any call. */
export const registryErrorsAbi = parseAbi([
  'error FileUrlAlreadyUsed()',
  'error InvalidSchemaId(uint256 schemaId)',
  'error ZeroAddress()',
  'error GranteeAlreadyRegistered()',
  'error GranteeNotFound()',
  'error InvalidNonce()',
  'error InvalidSignature()',
  'error InactivePermission()',
  'error NotPermissionGrantor()'
])

export const dataPortabilityGranteesAbi = parseAbi([
  'struct GranteeInfo { address owner; address granteeAddress; string publicKey; }',
  'function registerGrantee(address owner, address granteeAddress, string publicKey) returns (uint256)',
  'function granteeAddressToId(address) view returns (uint256)',
  'function grantees(uint256 granteeId) view returns (GranteeInfo)',
  'function granteesCount() view returns (uint256)',
  'event GranteeRegistered(uint256 indexed granteeId, address indexed owner, address indexed granteeAddress, string publicKey)',
  'error ZeroAddress()',
  'error GranteeAlreadyRegistered()',
  'error GranteeNotFound()'
])

export const dataPortabilityPermissionsAbi = parseAbi([
  'struct PermissionInput { uint256 nonce; uint256 granteeId; string grant; uint256[] fileIds; }',
  'struct PermissionInfo { uint256 id; address grantor; uint256 nonce; uint256 granteeId; string grant; uint256 startBlock; uint256 endBlock; uint256[] fileIds; }',
  'function addPermission(PermissionInput input, bytes signature) returns (uint256)',
  'function revokePermission(uint256 permissionId)',
  'function userNonce(address) view returns (uint256)',
  'function permissions(uint256 permissionId) view returns (PermissionInfo)',
  'event PermissionAdded(uint256 indexed permissionId, address indexed user, uint256 indexed granteeId, string grant, uint256[] fileIds)',
  'event PermissionRevoked(uint256 indexed permissionId)',
  'error InvalidNonce()',
  'error InvalidSignature()',
  'error GranteeNotFound()',
  'error InactivePermission()',
  'error NotPermissionGrantor()'
])
