#!/usr/bin/env bash
# Kubo (the Go IPFS daemon) for the kubo storage backend's tests and for owners who run their own:
# built from its Go module at the version the Go here is known to build. Prints the binary's path.
#
# Kubo v0.43.1 replaces go-libp2p with a fork (a v0.49 that accepts quic-go v0.62 and
# webtransport-go v0.13), which the module proxy does not serve; upstream go-libp2p v0.50.0 is
# the release that requires exactly those versions, so the build takes it instead.
set -euo pipefail
exec bash "$(dirname "$0")/go-install.sh" kubo github.com/ipfs/kubo v0.43.1 github.com/ipfs/kubo/cmd/ipfs \
  github.com/libp2p/go-libp2p@v0.50.0
