#!/usr/bin/env bash
# Installs the roadmap binary for the runner this step runs on and writes its
# path as the step output `bin` (docs/install.md, "How the actions get roadmap").
#
# 1. The action's ref names a release: vX.Y.Z itself, or a moving tag (v1) or a
#    commit that a vX.Y.Z tag points at, found with `git ls-remote --tags`.
#    The release's checksums.txt is fetched; when it lists the asset for this
#    OS and architecture, the asset is downloaded, its SHA-256 must match (a
#    mismatch is an error, never a fallback), and it is kept in the runner's
#    tool cache (RUNNER_TOOL_CACHE/roadmap/X.Y.Z/ARCH, as actions/tool-cache
#    lays it out), where a later run finds it without a request.
# 2. Otherwise (a commit or branch that is no release, a release without this
#    platform, a local action): built from the action's own source. When the
#    runner's Go is missing or older than go.mod asks, this phase sets the
#    output `go-version` instead of `bin`; the action then runs a pinned
#    actions/setup-go and calls this script again with ROADMAP_INSTALL_PHASE=build.
#
# Environment: ROADMAP_ACTION_ROOT (the action repository's root, required),
# ROADMAP_VERSION (github.action_ref), ROADMAP_REPOSITORY (owner/repo of the
# action, default roadmap-dev/roadmap), ROADMAP_INSTALL_PHASE (build: skip the
# release), RUNNER_TOOL_CACHE, GITHUB_SERVER_URL, GITHUB_OUTPUT.
set -euo pipefail

root="${ROADMAP_ACTION_ROOT:?ROADMAP_ACTION_ROOT is not set}"
ref="${ROADMAP_VERSION:-}"
repository="${ROADMAP_REPOSITORY:-roadmap-dev/roadmap}"
server="${GITHUB_SERVER_URL:-https://github.com}"
server="${server%/}"
out="${GITHUB_OUTPUT:-/dev/stdout}"
phase="${ROADMAP_INSTALL_PHASE:-release}"

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64|amd64) arch=amd64 tc_arch=x64 ;;
  aarch64|arm64) arch=arm64 tc_arch=arm64 ;;
  *) arch=$(uname -m) tc_arch=$arch ;;
esac

cache_root="${RUNNER_TOOL_CACHE:-${TMPDIR:-/tmp}}/roadmap"

output() { echo "$1=$2" >> "$out"; }

is_sha() { [[ "$1" =~ ^[0-9a-f]{40}$ ]]; }

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# resolve REF prints the highest vX.Y.Z tag on the commit REF names (a tag or a
# commit SHA); nothing when no release tag is there. Fails when the tags cannot
# be read.
resolve() {
  local refs
  refs=$(GIT_TERMINAL_PROMPT=0 git ls-remote --tags "$server/$repository.git") || return 1
  printf '%s\n' "$refs" | awk -v want="$1" '
    {
      name = $2; sub(/^refs\/tags\//, "", name)
      # An annotated tag is listed twice; the peeled line (^{}) names its commit.
      if (sub(/\^\{\}$/, "", name) || !(name in commit)) commit[name] = $1
    }
    END {
      target = (want ~ /^[0-9a-f]+$/ && length(want) == 40) ? want : commit[want]
      if (target == "") exit
      for (n in commit) if (n ~ /^v[0-9]+\.[0-9]+\.[0-9]+$/ && commit[n] == target) print n
    }' | sort -V | tail -n 1
}

# fetch URL FILE: 0 fetched, 4 not there (HTTP 404, or no such file for file://),
# 1 any other failure.
fetch() {
  local code rc=0
  code=$(curl -sSL --retry 3 -o "$2" -w '%{http_code}' "$1") || rc=$?
  if [ "$rc" = 0 ] && { [ "$code" = 000 ] || [ "${code:0:1}" = 2 ]; }; then return 0; fi
  if [ "$code" = 404 ] || [ "$rc" = 37 ]; then return 4; fi
  echo "::error::roadmap: fetching $1 failed (curl exit $rc, HTTP $code)"
  return 1
}

# install_release TAG: installs TAG's asset for this platform and exits, or
# returns when the release has no such asset.
install_release() {
  local tag="$1" version="${1#v}"
  local dir="$cache_root/$version/$tc_arch"
  if [ -f "$cache_root/$version/$tc_arch.complete" ] && [ -x "$dir/roadmap" ]; then
    echo "roadmap $tag from the tool cache ($dir)"
    output bin "$dir/roadmap"
    exit 0
  fi
  local asset="roadmap_${version}_${os}_${arch}.tar.gz"
  local base="$server/$repository/releases/download/$tag"
  mkdir -p "$cache_root"
  tmp=$(mktemp -d "$cache_root/.download.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  local rc=0
  fetch "$base/checksums.txt" "$tmp/checksums.txt" || rc=$?
  if [ "$rc" = 4 ]; then
    echo "::notice::roadmap $tag: the release has no checksums.txt; building from the action's source"
    return 0
  elif [ "$rc" != 0 ]; then
    exit 1
  fi
  local want
  want=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1; exit }' "$tmp/checksums.txt")
  if [ -z "$want" ]; then
    echo "::notice::roadmap $tag: the release has no asset for $os/$arch ($asset); building from the action's source"
    return 0
  fi
  fetch "$base/$asset" "$tmp/$asset" || exit 1
  local got
  got=$(sha256 "$tmp/$asset")
  if [ "$got" != "$want" ]; then
    echo "::error::roadmap $tag: checksum mismatch for $asset: checksums.txt says sha256 $want, the download is sha256 $got; refusing to install it"
    exit 1
  fi
  mkdir -p "$tmp/x"
  tar -xzf "$tmp/$asset" -C "$tmp/x" roadmap
  # Into place in one rename, then the marker: a run killed half-way leaves no
  # cache entry that looks complete.
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  mv "$tmp/x" "$dir"
  touch "$cache_root/$version/$tc_arch.complete"
  echo "roadmap $tag from the release asset $asset (checksum verified)"
  output bin "$dir/roadmap"
  exit 0
}

# go_wanted prints the Go version go.mod asks for (its go line).
go_wanted() { awk '$1 == "go" { print $2; exit }' "$root/go.mod"; }

# go_ok: a go on PATH at least as new as go.mod asks.
go_ok() {
  command -v go >/dev/null || return 1
  local have want
  have=$(go env GOVERSION 2>/dev/null) || return 1
  have="${have#go}"
  want=$(go_wanted)
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" = "$want" ]
}

build() {
  local dir
  if is_sha "$ref"; then
    dir="$cache_root/src/$ref"
    if [ -x "$dir/roadmap" ]; then
      echo "roadmap $ref (built from source earlier) from the tool cache"
      output bin "$dir/roadmap"
      exit 0
    fi
  else
    dir="$cache_root/src/build-$$"
  fi
  mkdir -p "$dir"
  # -trimpath keeps the build cache valid when the action's path changes between runs. A
  # commit's build carries the commit (`roadmap version` names it): a checkout without .git
  # (the reusable workflows' pinned one) gives Go no VCS stamp of its own.
  local stamp=()
  if is_sha "$ref"; then stamp=(-ldflags "-X github.com/roadmap-dev/roadmap/internal/cli.Commit=$ref"); fi
  (cd "$root" && go build -trimpath ${stamp[@]+"${stamp[@]}"} -o "$dir/roadmap.new" ./cmd/roadmap)
  mv "$dir/roadmap.new" "$dir/roadmap"
  echo "roadmap built from source at ref '${ref:-local}' ($(go env GOVERSION)): $("$dir/roadmap" version 2>/dev/null || echo "roadmap version failed")"
  output bin "$dir/roadmap"
  exit 0
}

if [ "$phase" = build ]; then
  build
fi

tag=""
if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  tag="$ref"
elif [ -n "$ref" ]; then
  resolved="$cache_root/refs/$ref"
  if is_sha "$ref" && [ -s "$resolved" ]; then
    tag=$(cat "$resolved")
  elif tag=$(resolve "$ref"); then
    if is_sha "$ref" && [ -n "$tag" ]; then
      mkdir -p "$cache_root/refs" && echo "$tag" > "$resolved"
    fi
    [ -n "$tag" ] || echo "roadmap: ref '$ref' is no release; building from the action's source"
  else
    tag=""
    echo "::notice::roadmap: could not read the tags of $repository to resolve '$ref'; building from the action's source"
  fi
fi
[ -n "$tag" ] && install_release "$tag"

if go_ok; then
  build
fi
want=$(go_wanted)
echo "roadmap: Go $want is needed to build from source (found: $(go env GOVERSION 2>/dev/null || echo none)); the action sets it up"
output go-version "$want"
