#!/usr/bin/env bash
# Installs the js-ipfs daemon (npm `ipfs` 0.66.1, a Kubo-RPC-compatible node) into .ipfs-rpc/ at
# the repo root, apart from the project's own node_modules: it is a test fixture for the kubo
# storage backend, not a dependency, and its old libp2p stack must not mix with ours.
# Idempotent: does nothing when the pinned version is already there. Safe to run concurrently
# (flock), so parallel test files can all call it.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=.ipfs-rpc
VERSION=0.66.1
mkdir -p "$PREFIX"
exec 9>"$PREFIX/.install.lock"
flock 9
installed() {
  node -e "process.exit(require('./$PREFIX/node_modules/ipfs/package.json').version === '$VERSION' ? 0 : 1)" 2>/dev/null
}
if installed; then exit 0; fi
echo "installing ipfs@$VERSION into $PREFIX (test fixture for the kubo backend)" >&2
NO_UPDATE_NOTIFIER=1 npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --loglevel=error \
  --no-package-lock "ipfs@$VERSION" >&2
installed
