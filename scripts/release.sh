#!/usr/bin/env bash
# Builds the release assets of roadmap for a tag: one tar.gz per OS and architecture a
# runner has, and checksums.txt (SHA-256) that scripts/install-roadmap.sh verifies.
# Usage: scripts/release.sh vX.Y.Z OUTDIR
set -euo pipefail
tag="${1:?usage: release.sh vX.Y.Z OUTDIR}"
out="${2:?usage: release.sh vX.Y.Z OUTDIR}"
version="${tag#v}"
mkdir -p "$out"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  os="${target%/*}"; arch="${target#*/}"
  work=$(mktemp -d)
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
    -ldflags "-s -w -X github.com/roadmap-dev/roadmap/internal/cli.Version=$tag" \
    -o "$work/roadmap" ./cmd/roadmap
  tar -czf "$out/roadmap_${version}_${os}_${arch}.tar.gz" -C "$work" roadmap
  rm -rf "$work"
done
(cd "$out" && sha256sum roadmap_*.tar.gz > checksums.txt)
echo "assets in $out:"
ls -l "$out"
