#!/usr/bin/env bash
# IPFS Cluster's peer daemon (ipfs-cluster-service), the pinning service the tests and the bench
# pin to: built from its Go module at the newest version the module proxy here serves (v1.1.0;
# v1.1.1 and later are refused). Prints the binary's path.
set -euo pipefail
exec bash "$(dirname "$0")/go-install.sh" ipfs-cluster github.com/ipfs-cluster/ipfs-cluster v1.1.0 \
  github.com/ipfs-cluster/ipfs-cluster/cmd/ipfs-cluster-service
