#!/usr/bin/env bash
# Builds the release assets of roadmap for a tag: one tar.gz per OS and architecture a
# runner has (the binary and LICENSE), checksums.txt (SHA-256) that
# scripts/install-roadmap.sh verifies, and notes.md, the tag's section of CHANGELOG.md.
# A tag without a CHANGELOG.md section is refused: the release keeps the changelog.
#
# Usage: scripts/release.sh vX.Y.Z OUTDIR   (run from the module root)
# ROADMAP_TARGETS overrides the platforms ("linux/amd64 darwin/arm64").
# The archives are reproducible: the same commit gives the same bytes, whoever builds it
# (-trimpath, no build id, tar entries with the commit's time and no owner).
set -euo pipefail
tag="${1:?usage: release.sh vX.Y.Z OUTDIR}"
out="${2:?usage: release.sh vX.Y.Z OUTDIR}"
if ! [[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: '$tag' is not a version tag vX.Y.Z[-pre]" >&2
  exit 2
fi
version="${tag#v}"
targets="${ROADMAP_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"

mkdir -p "$out"
# The tag's section of the changelog: from "## [X.Y.Z]" to the next "## ".
awk -v v="$version" '
  index($0, "## [" v "]") == 1 { on = 1; next }
  on && /^## / { exit }
  on { print }' CHANGELOG.md > "$out/notes.md"
if ! grep -q '[^[:space:]]' "$out/notes.md"; then
  echo "release.sh: CHANGELOG.md has no section '## [$version]'; move the Unreleased entries under it first" >&2
  exit 1
fi

epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
for target in $targets; do
  os="${target%/*}"; arch="${target#*/}"
  work=$(mktemp -d)
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath \
    -ldflags "-s -w -buildid= -X github.com/roadmap-dev/roadmap/internal/cli.Version=$tag" \
    -o "$work/roadmap" ./cmd/roadmap
  files=(roadmap)
  if [ -f LICENSE ]; then cp LICENSE "$work/"; files+=(LICENSE); fi
  (cd "$work" && tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
     -cf - "${files[@]}" | gzip -n > "$out/roadmap_${version}_${os}_${arch}.tar.gz")
  rm -rf "$work"
done
(cd "$out" && sha256sum roadmap_*.tar.gz > checksums.txt)
echo "assets in $out:"
ls -l "$out"
