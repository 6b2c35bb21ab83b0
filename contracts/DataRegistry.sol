// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface ISchemaValidator {
    function isValidSchemaId(uint256 schemaId) external view returns (bool);
}

/// Minimal stand-in for Vana's DataRegistry, for tests and the dev chain. The external surface
/// Hearth uses matches the deployed contract (docs/protocol.md §2.5): sequential file ids from 1, one
/// registration per URL, schemaId 0 = none, any other schemaId must exist in the refiner registry.
/// Permissions are accepted for ABI compatibility and not stored: Hearth always passes none.
contract DataRegistry {
    struct Permission {
        address account;
        string key;
    }

    struct FileResponse {
        uint256 id;
        address ownerAddress;
        string url;
        uint256 schemaId;
        uint256 addedAtBlock;
    }

    // Owner and block share one storage slot to keep registration gas (and so batch size) sane.
    struct FileInfo {
        address ownerAddress;
        uint64 addedAtBlock;
        uint256 schemaId;
        string url;
    }

    error FileUrlAlreadyUsed();
    error InvalidSchemaId(uint256 schemaId);

    event FileAddedV2(uint256 indexed fileId, address indexed ownerAddress, string url, uint256 schemaId);

    ISchemaValidator public immutable dataRefinerRegistry;
    uint256 public filesCount;
    mapping(uint256 => FileInfo) private _files;
    mapping(bytes32 => uint256) private _fileIdByUrlHash;

    constructor(address refinerRegistry) {
        dataRefinerRegistry = ISchemaValidator(refinerRegistry);
    }

    function addFileWithSchema(string calldata url, uint256 schemaId) external returns (uint256) {
        return _addFile(url, msg.sender, schemaId);
    }

    function addFileWithPermissionsAndSchema(
        string calldata url,
        address ownerAddress,
        Permission[] calldata permissions,
        uint256 schemaId
    ) external returns (uint256) {
        permissions;
        return _addFile(url, ownerAddress, schemaId);
    }

    function files(uint256 fileId) external view returns (FileResponse memory) {
        FileInfo storage info = _files[fileId];
        return FileResponse(
            info.ownerAddress == address(0) ? 0 : fileId,
            info.ownerAddress,
            info.url,
            info.schemaId,
            info.addedAtBlock
        );
    }

    function fileIdByUrl(string calldata url) external view returns (uint256) {
        return _fileIdByUrlHash[keccak256(bytes(url))];
    }

    function _addFile(string calldata url, address ownerAddress, uint256 schemaId) private returns (uint256) {
        bytes32 urlHash = keccak256(bytes(url));
        if (_fileIdByUrlHash[urlHash] != 0) revert FileUrlAlreadyUsed();
        if (schemaId != 0 && !dataRefinerRegistry.isValidSchemaId(schemaId)) revert InvalidSchemaId(schemaId);
        uint256 fileId = ++filesCount;
        _files[fileId] = FileInfo(ownerAddress, uint64(block.number), schemaId, url);
        _fileIdByUrlHash[urlHash] = fileId;
        emit FileAddedV2(fileId, ownerAddress, url, schemaId);
        return fileId;
    }
}
