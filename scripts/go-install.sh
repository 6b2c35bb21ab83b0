#!/usr/bin/env bash
# Builds one Go command from its module at a pinned version into .tools/go/<name>-<version>/ at the
# repo root (ignored), once: later calls find the binary and return at once. The module and build
# caches live outside the checkout (HEARTH_GO_CACHE, default ~/.cache/hearth-go) so a fresh clone
# (CI) only links again. Safe to run concurrently (flock): parallel test files may all call it.
# Usage: scripts/go-install.sh <name> <module> <version> <package> [module@version ...]; prints the
# binary's path. The extra module@version arguments raise those dependencies (see install-kubo.sh).
#
# Not `go install pkg@version`: it refuses modules whose go.mod has replace directives (Kubo
# replaces go-libp2p with a fork). The command is built from a small wrapper module that requires
# it at that version and carries the same replace directives where the module proxy serves their
# targets, so the build list is the project's own release list as far as it can be had here.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=$1 MODULE=$2 VERSION=$3 PACKAGE=$4
shift 4
EXTRA=("$@")
DEST="$PWD/.tools/go/$NAME-$VERSION"
BIN="$DEST/$(basename "$PACKAGE")"
mkdir -p "$DEST"
exec 9>"$DEST/.install.lock"
flock 9
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
CACHE=${HEARTH_GO_CACHE:-$HOME/.cache/hearth-go}
mkdir -p "$CACHE/mod" "$CACHE/build" "$CACHE/path"
export GOPATH="$CACHE/path" GOMODCACHE="$CACHE/mod" GOCACHE="$CACHE/build" GOFLAGS=-buildvcs=false \
  CGO_ENABLED=0 GOTOOLCHAIN=local
echo "building $PACKAGE@$VERSION into $DEST (once; minutes on 2 cores)" >&2
started=$(date +%s)
WRAP="$DEST/wrapper"
rm -rf "$WRAP" && mkdir -p "$WRAP" && cd "$WRAP"
go mod init "hearth.local/tools/$NAME" >/dev/null 2>&1
GOMOD_FILE=$(go mod download -json "$MODULE@$VERSION" | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).GoMod))')
go mod edit -json "$GOMOD_FILE" | node -e '
  let s=""; process.stdin.on("data",d=>s+=d).on("end",()=>{
    for (const r of JSON.parse(s).Replace ?? []) {
      if (r.New.Version === undefined) continue // a local path: meaningful only inside that repo
      const old = r.Old.Path + (r.Old.Version ? "@" + r.Old.Version : "")
      console.log(`-replace=${old}=${r.New.Path}@${r.New.Version}`)
    }
  })' | while read -r edit; do
  # A replacement the module proxy does not serve (a fork) is left out: the build then uses the
  # version the module requires, and says so.
  target=${edit##*=}
  if go mod download "$target" >/dev/null 2>&1; then go mod edit "$edit"; else echo "not served, left out: $edit" >&2; fi
done
go get "$PACKAGE@$VERSION" "${EXTRA[@]}" >&2
# nice: the build shares the machine with running tests. CGO off: a static binary, no C toolchain.
nice -n 10 go build -o "$BIN.partial" "$PACKAGE" >&2
mv "$BIN.partial" "$BIN"
echo "built $NAME $VERSION in $(( $(date +%s) - started )) s" >&2
echo "$BIN"
