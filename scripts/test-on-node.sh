#!/usr/bin/env bash
# Runs the tests on another Node.js release line: `scripts/test-on-node.sh 24 [filter…]` (the
# filters are run-tests.mjs's). Native modules are built per Node ABI, so that Node gets a copy of
# this checkout's files (tracked and untracked, not ignored) in .node/<major>/tree with its own
# node_modules, installed by `npm ci` under that Node with its headers (npm_config_nodedir): every
# native dependency is rebuilt, whatever the list is. The copy is refreshed on each run; `npm ci`
# runs again only when package-lock.json or the Node version changed, otherwise only the build.
# This checkout's own node_modules (the machine's Node) is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:?usage: scripts/test-on-node.sh <major|version> [test filter…]}
shift
NODE_DIR=$(bash scripts/install-node.sh "$VERSION")
TREE="$NODE_DIR/tree"
mkdir -p "$TREE"
exec 8>"$NODE_DIR/.tree.lock"
flock 8
# Refresh the copy: everything but its node_modules and the kubo tests' fixture goes, then this
# checkout's files come (a file deleted here is deleted there too).
find "$TREE" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .ipfs-rpc ! -name .install-stamp -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -xf - -C "$TREE"
export PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" NO_UPDATE_NOTIFIER=1
cd "$TREE"
stamp="$(node -p 'process.version') $(sha256sum package-lock.json | cut -d' ' -f1)"
started=$SECONDS
if [ "$(cat .install-stamp 2>/dev/null)" != "$stamp" ]; then
  rm -f .install-stamp
  npm ci --no-audit --no-fund
  echo "$stamp" > .install-stamp
  echo "test-on-node: npm ci under Node $(node -v): $((SECONDS - started)) s" >&2
else
  npm run --silent build
  echo "test-on-node: build under Node $(node -v): $((SECONDS - started)) s" >&2
fi
# Kubo and IPFS Cluster for this tree (the Go caches are shared: a relink, not a rebuild)
bash scripts/install-kubo.sh >/dev/null
bash scripts/install-ipfs-cluster.sh >/dev/null
exec node scripts/run-tests.mjs "$@"
