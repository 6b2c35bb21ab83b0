// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// The `aggregate3` entry point of the canonical Multicall3 (same ABI and semantics), deployed on
/// the dev chain so Hearth can batch reads and registrations there. Each call runs with
/// msg.sender = this contract, which is why batched registrations name the owner explicitly.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata call = calls[i];
            Result memory result = returnData[i];
            (result.success, result.returnData) = call.target.call(call.callData);
            require(call.allowFailure || result.success, "Multicall3: call failed");
        }
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }
}
