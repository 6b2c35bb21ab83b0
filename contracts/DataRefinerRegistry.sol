// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// Minimal stand-in for Vana's DataRefinerRegistry, for tests and the dev chain. The external
/// surface (functions, struct layout, event and error) matches the deployed contract (docs/protocol.md §2.5);
/// refiners, ownership and upgradeability are left out because Hearth does not use them.
contract DataRefinerRegistry {
    struct SchemaInfo {
        string name;
        string dialect;
        string definitionUrl;
    }

    error InvalidSchemaId(uint256 schemaId);

    event SchemaAdded(uint256 indexed schemaId, string name, string dialect, string definitionUrl);

    uint256 public schemasCount;
    mapping(uint256 => SchemaInfo) private _schemas;

    function addSchema(
        string calldata name,
        string calldata dialect,
        string calldata definitionUrl
    ) external returns (uint256) {
        uint256 schemaId = ++schemasCount;
        _schemas[schemaId] = SchemaInfo(name, dialect, definitionUrl);
        emit SchemaAdded(schemaId, name, dialect, definitionUrl);
        return schemaId;
    }

    function schemas(uint256 schemaId) external view returns (SchemaInfo memory) {
        if (!isValidSchemaId(schemaId)) revert InvalidSchemaId(schemaId);
        return _schemas[schemaId];
    }

    function isValidSchemaId(uint256 schemaId) public view returns (bool) {
        return schemaId > 0 && schemaId <= schemasCount;
    }
}
