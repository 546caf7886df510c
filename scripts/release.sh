#!/usr/bin/env bash
# Writes the release notes of a tag: its section of CHANGELOG.md, from the heading
# "## [X.Y.Z]" (a date may follow) to the next "## ", or to the link lines ("[X.Y.Z]: URL")
# that end the file. .github/workflows/release.yml gives the
# file to GoReleaser (--release-notes); .goreleaser.yaml builds everything else
# (docs/release.md). A tag without a CHANGELOG.md section, or with an empty one, is refused:
# the release keeps the changelog.
#
# Usage: scripts/release.sh vX.Y.Z[-pre] NOTES_FILE   (run from the module root)
set -euo pipefail
tag="${1:?usage: release.sh vX.Y.Z NOTES_FILE}"
notes="${2:?usage: release.sh vX.Y.Z NOTES_FILE}"
if ! [[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: '$tag' is not a version tag vX.Y.Z[-pre]" >&2
  exit 2
fi
version="${tag#v}"
mkdir -p "$(dirname "$notes")"
awk -v v="$version" '
  index($0, "## [" v "]") == 1 { on = 1; next }
  on && /^## / { exit }
  on && /^\[[^]]+\]: / { exit }
  on { print }' CHANGELOG.md > "$notes"
if ! grep -q '[^[:space:]]' "$notes"; then
  rm -f "$notes"
  echo "release.sh: CHANGELOG.md has no section '## [$version]'; move the Unreleased entries under it first" >&2
  exit 1
fi
echo "release notes of $tag in $notes ($(wc -l < "$notes") lines)"
