// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// Minimal stand-in for Vana's DataPortabilityGrantees, for tests and the dev chain. The surface
/// Hearth uses matches the deployed contract (docs/protocol.md §3.8): anyone may register a
/// grantee (a builder) for an owner; ids are sequential from 1; one registration per address.
contract DataPortabilityGrantees {
    struct GranteeInfo {
        address owner;
        address granteeAddress;
        string publicKey;
    }

    error ZeroAddress();
    error GranteeAlreadyRegistered();
    error GranteeNotFound();

    event GranteeRegistered(uint256 indexed granteeId, address indexed owner, address indexed granteeAddress, string publicKey);

    uint256 public granteesCount;
    mapping(address => uint256) public granteeAddressToId;
    mapping(uint256 => GranteeInfo) private _grantees;

    function registerGrantee(address owner, address granteeAddress, string calldata publicKey) external returns (uint256) {
        if (owner == address(0) || granteeAddress == address(0)) revert ZeroAddress();
        if (granteeAddressToId[granteeAddress] != 0) revert GranteeAlreadyRegistered();
        uint256 granteeId = ++granteesCount;
        _grantees[granteeId] = GranteeInfo(owner, granteeAddress, publicKey);
        granteeAddressToId[granteeAddress] = granteeId;
        emit GranteeRegistered(granteeId, owner, granteeAddress, publicKey);
        return granteeId;
    }

    function grantees(uint256 granteeId) external view returns (GranteeInfo memory) {
        if (granteeId == 0 || granteeId > granteesCount) revert GranteeNotFound();
        return _grantees[granteeId];
    }
}
