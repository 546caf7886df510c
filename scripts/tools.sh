#!/usr/bin/env bash
# Installs the project's pinned command-line tools into ./.tools/bin with
# `go install pkg@version`, so a fresh machine with only Go can get them from
# the Go module proxy. A tool already built from the pinned module version is
# left alone: the check reads the module version Go recorded in the binary.
#
# Usage: scripts/tools.sh [TOOL...]   (no arguments: every tool below)
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
bin="$PWD/.tools/bin"

# name  package  module  version
tools=(
	"act github.com/nektos/act github.com/nektos/act v0.2.89"
)

want=("$@")

selected() {
	[ ${#want[@]} -eq 0 ] && return 0
	local w
	for w in "${want[@]}"; do
		[ "$w" = "$1" ] && return 0
	done
	return 1
}

# installed_version BINARY MODULE prints the version of MODULE the binary was
# built from, or nothing when the binary is missing or was built otherwise.
installed_version() {
	[ -x "$1" ] || return 0
	"$GO" version -m "$1" 2>/dev/null | awk -v mod="$2" '$1 == "mod" && $2 == mod { print $3 }'
}

for w in ${want[@]+"${want[@]}"}; do
	printf '%s\n' "${tools[@]}" | grep -q "^$w " || { echo "tools: unknown tool $w" >&2; exit 2; }
done

mkdir -p "$bin"
for entry in "${tools[@]}"; do
	read -r name pkg mod version <<<"$entry"
	selected "$name" || continue
	have=$(installed_version "$bin/$name" "$mod")
	if [ "$have" = "$version" ]; then
		continue
	fi
	echo "tools: installing $name $version${have:+ (replacing $have)}" >&2
	GOBIN="$bin" "$GO" install "$pkg@$version"
done
