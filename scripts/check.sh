#!/usr/bin/env bash
# The fast loop (`make check`, README "Development", docs/testing.md): gofmt on the tracked Go
# files, `go vet ./...` (which type-checks every package and its tests, so a change that breaks
# an importer's build fails here), then `go test -short` with Go's test cache on the packages
# the change touched, and tools/cilayout's check that nothing was dropped from CI.
#
# The change is what `make mutants` calls it (docs/mutants.md): the work tree, uncommitted and
# untracked files included, against the merge base with origin/main (or a local main) when HEAD
# is not on it, else against HEAD. A changed file counts for the package of its directory or, for a file
# under testdata/ or another directory that holds no package, of the nearest one above it.
# Files under no package (docs, workflows, the Makefile) are named, not tested: `make test`
# tests them. CHECK_ALL=1 tests every package (`go test -short ./...`, cached where nothing
# changed).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

bad=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$bad" ]; then
	echo "gofmt would change:"
	echo "$bad"
	exit 1
fi
echo "check: go vet ./..."
$GO vet ./...

if [ "${CHECK_ALL:-0}" = 1 ]; then
	echo "check: go test -short ./..."
	exec $GO test -short ./...
fi

base=HEAD
for main in origin/main main; do
	git rev-parse --verify -q "$main" >/dev/null || continue
	mb=$(git merge-base HEAD "$main" 2>/dev/null || true)
	[ -n "$mb" ] && [ "$mb" != "$(git rev-parse HEAD)" ] && base=$mb
	break
done
module=$($GO list -m)
# Every package directory, relative to the root ("." for the root).
dirs=$($GO list -f '{{.Dir}}' ./... | sed "s|^$PWD/\{0,1\}||; s|^$|.|")
pkgs=()
outside=()
while IFS= read -r f; do
	[ -n "$f" ] || continue
	d=$(dirname "$f")
	while :; do
		if grep -qxF "$d" <<<"$dirs"; then
			[ "$d" = . ] && p=$module || p=./$d
			[[ " ${pkgs[*]-} " == *" $p "* ]] || pkgs+=("$p")
			break
		fi
		if [ "$d" = . ]; then
			outside+=("$f")
			break
		fi
		d=$(dirname "$d")
	done
done < <({ git diff --name-only --no-renames "$base"; git ls-files --others --exclude-standard; } | sort -u)

[ ${#outside[@]} -eq 0 ] || echo "check: changed outside any package (make test covers them): ${outside[*]}"
[[ " ${pkgs[*]-} " == *" ./tools/cilayout "* ]] || pkgs+=(./tools/cilayout)
echo "check: go test -short ${pkgs[*]} (the packages changed since $(git rev-parse --short "$base"), and the CI layout check)"
exec $GO test -short "${pkgs[@]}"
