#!/usr/bin/env bash
# Installs the roadmap binary for the runner this step runs on and writes its
# path as the step output `bin`.
#
# 1. A release asset for the runner's OS and architecture, when the action is
#    pinned to a release tag (vX.Y.Z): downloaded next to checksums.txt, its
#    SHA-256 verified, kept in the runner's tool cache for later steps.
# 2. Otherwise (pinned to a commit or a branch, no asset, no network): built
#    from the action's own source with `go build`.
#
# Environment: ROADMAP_ACTION_ROOT (the action repository's root, required),
# ROADMAP_VERSION (the action's ref), ROADMAP_REPOSITORY (owner/repo of the
# action, default roadmap-dev/roadmap), RUNNER_TOOL_CACHE, GITHUB_SERVER_URL,
# GITHUB_OUTPUT.
set -euo pipefail

root="${ROADMAP_ACTION_ROOT:?ROADMAP_ACTION_ROOT is not set}"
version="${ROADMAP_VERSION:-}"
repository="${ROADMAP_REPOSITORY:-roadmap-dev/roadmap}"
out="${GITHUB_OUTPUT:-/dev/stdout}"

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64|amd64) arch=amd64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac

cache_root="${RUNNER_TOOL_CACHE:-${TMPDIR:-/tmp}}/roadmap"

if [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  dir="$cache_root/$version/$os-$arch"
  if [ -x "$dir/roadmap" ]; then
    echo "roadmap $version from the tool cache"
    echo "bin=$dir/roadmap" >> "$out"
    exit 0
  fi
  asset="roadmap_${version#v}_${os}_${arch}.tar.gz"
  base="${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/$version"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  if command -v curl >/dev/null &&
     curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset" &&
     curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/checksums.txt"; then
    if ! (cd "$tmp" && grep " $asset\$" checksums.txt | sha256sum -c --status -); then
      echo "::error::roadmap $version: the checksum of $asset does not match checksums.txt"
      exit 1
    fi
    mkdir -p "$dir"
    tar -xzf "$tmp/$asset" -C "$dir" roadmap
    echo "roadmap $version from the release asset $asset (checksum verified)"
    echo "bin=$dir/roadmap" >> "$out"
    exit 0
  fi
  echo "::notice::roadmap $version: no release asset $asset could be fetched; building from the action's source"
fi

if ! command -v go >/dev/null; then
  echo "::error::roadmap: no release asset for ref '${version:-unknown}' on $os/$arch and no Go toolchain to build one; pin the action to a release tag or add actions/setup-go"
  exit 1
fi
dir="$cache_root/src-$$"
mkdir -p "$dir"
# -trimpath keeps the build cache valid when the action's path changes between runs.
(cd "$root" && go build -trimpath -o "$dir/roadmap" ./cmd/roadmap)
echo "roadmap built from source at ref '${version:-unknown}'"
echo "bin=$dir/roadmap" >> "$out"
