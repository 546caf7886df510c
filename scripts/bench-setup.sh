#!/usr/bin/env bash
# Measures what a roadmap step costs before the verb starts, with the binary already in
# the tool cache: from the step's start (a fresh bash running the install step, as the
# actions' `run:` does) to the first line the verb prints. docs/install.md has the figure.
#
# It builds roadmap once, publishes it as a local release (file://, the asset and
# checksums.txt named as .goreleaser.yaml names them), lets the install script fill a
# fresh tool cache from it, then times RUNS steps that find it there.
# Usage: scripts/bench-setup.sh [RUNS] [VERB...]   (default 20 runs of `roadmap version`)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"; shift || true
verb=("${@:-version}")
tag=v0.0.1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

os=$(go env GOOS); arch=$(go env GOARCH)
asset="roadmap_${tag#v}_${os}_${arch}.tar.gz"
release="$work/server/roadmap-dev/roadmap/releases/download/$tag"
mkdir -p "$release" "$work/bin"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/bin/roadmap" ./cmd/roadmap
tar -czf "$release/$asset" -C "$work/bin" roadmap
(cd "$release" && sha256sum "$asset" > checksums.txt)

step() {
  env -i PATH="$PATH" HOME="$work" \
    ROADMAP_ACTION_ROOT="$PWD" ROADMAP_VERSION="$tag" \
    RUNNER_TOOL_CACHE="$work/tool-cache" GITHUB_SERVER_URL="file://$work/server" \
    GITHUB_OUTPUT="$work/output" \
    bash -e -o pipefail -c '
      scripts/install-roadmap.sh > "$HOME/install.log"
      bin=$(sed -n "s/^bin=//p" "$GITHUB_OUTPUT" | tail -n 1)
      exec "$bin" "$@"' step "${verb[@]}"
}

now() { date +%s%N; }

: > "$work/output"
t0=$(now); step | head -n 1 >/dev/null; t1=$(now)
cold=$(( (t1 - t0) / 1000000 ))

times=()
for _ in $(seq "$runs"); do
  : > "$work/output"
  t0=$(now)
  # The time of the first line: head exits on it.
  step | head -n 1 >/dev/null
  t1=$(now)
  times+=($(( (t1 - t0) / 1000000 )))
done
if ! grep -q "from the tool cache" "$work/install.log"; then
  echo "bench-setup.sh: the last run did not take the binary from the tool cache:" >&2
  cat "$work/install.log" >&2
  exit 1
fi
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")
p90=$(printf '%s\n' "$sorted" | sed -n "$(( (runs * 9 + 9) / 10 ))p")
max=$(printf '%s\n' "$sorted" | tail -n 1)
echo "setup to the first line of 'roadmap ${verb[*]}', $runs runs with a cached binary ($(nproc) cores, $(uname -sm)):"
echo "  median ${median} ms, p90 ${p90} ms, max ${max} ms"
echo "  first run (download from a local release, verify, unpack into the tool cache): ${cold} ms"
