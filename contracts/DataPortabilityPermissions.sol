// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IGranteeCount {
    function granteesCount() external view returns (uint256);
}

/// Minimal stand-in for Vana's DataPortabilityPermissions, for tests and the dev chain. The
/// surface Hearth uses matches the deployed contract (docs/protocol.md §3.8): a permission is the
/// grantor's EIP-712 signature over (nonce, granteeId, grant, fileIds), relayed by anyone; the
/// nonce must be the grantor's next one; only the grantor can revoke, which sets endBlock.
contract DataPortabilityPermissions {
    struct PermissionInput {
        uint256 nonce;
        uint256 granteeId;
        string grant;
        uint256[] fileIds;
    }

    struct PermissionInfo {
        uint256 id;
        address grantor;
        uint256 nonce;
        uint256 granteeId;
        string grant;
        uint256 startBlock;
        uint256 endBlock;
        uint256[] fileIds;
    }

    error InvalidNonce();
    error InvalidSignature();
    error GranteeNotFound();
    error InactivePermission();
    error NotPermissionGrantor();

    event PermissionAdded(uint256 indexed permissionId, address indexed user, uint256 indexed granteeId, string grant, uint256[] fileIds);
    event PermissionRevoked(uint256 indexed permissionId);

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant PERMISSION_TYPEHASH =
        keccak256("Permission(uint256 nonce,uint256 granteeId,string grant,uint256[] fileIds)");
    // Upper bound of s in a canonical signature (EIP-2): the other half is malleable.
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    IGranteeCount public immutable granteesContract;
    uint256 public permissionsCount;
    mapping(address => uint256) public userNonce;
    mapping(uint256 => PermissionInfo) private _permissions;

    constructor(address grantees) {
        granteesContract = IGranteeCount(grantees);
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(
            DOMAIN_TYPEHASH,
            keccak256(bytes("VanaDataPortabilityPermissions")),
            keccak256(bytes("1")),
            block.chainid,
            address(this)
        ));
    }

    function addPermission(PermissionInput calldata input, bytes calldata signature) external returns (uint256) {
        address grantor = _recover(_digest(input), signature);
        if (input.nonce != userNonce[grantor]) revert InvalidNonce();
        if (input.granteeId == 0 || input.granteeId > granteesContract.granteesCount()) revert GranteeNotFound();
        userNonce[grantor] = input.nonce + 1;
        uint256 permissionId = ++permissionsCount;
        PermissionInfo storage p = _permissions[permissionId];
        p.id = permissionId;
        p.grantor = grantor;
        p.nonce = input.nonce;
        p.granteeId = input.granteeId;
        p.grant = input.grant;
        p.startBlock = block.number;
        p.fileIds = input.fileIds;
        emit PermissionAdded(permissionId, grantor, input.granteeId, input.grant, input.fileIds);
        return permissionId;
    }

    function revokePermission(uint256 permissionId) external {
        PermissionInfo storage p = _permissions[permissionId];
        if (p.id == 0 || p.endBlock != 0) revert InactivePermission();
        if (p.grantor != msg.sender) revert NotPermissionGrantor();
        p.endBlock = block.number;
        emit PermissionRevoked(permissionId);
    }

    /// An unknown id reads as an all-zero permission (id 0).
    function permissions(uint256 permissionId) external view returns (PermissionInfo memory) {
        return _permissions[permissionId];
    }

    function _digest(PermissionInput calldata input) private view returns (bytes32) {
        bytes32 structHash = keccak256(abi.encode(
            PERMISSION_TYPEHASH,
            input.nonce,
            input.granteeId,
            keccak256(bytes(input.grant)),
            keccak256(abi.encodePacked(input.fileIds))
        ));
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) revert InvalidSignature();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if ((v != 27 && v != 28) || uint256(s) > HALF_ORDER) revert InvalidSignature();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        return signer;
    }
}
