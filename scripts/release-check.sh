#!/usr/bin/env bash
# The release short of publishing (`make release-check`, docs/release.md): `goreleaser
# check`, a snapshot of .goreleaser.yaml into dist/ (every platform's archive,
# checksums.txt, the SBOMs; no tag needed), the host's binary must print the snapshot's
# version, TestInstallGoReleaserDist installs the archives through
# scripts/install-roadmap.sh from a loopback release, and TestChangelogVersions checks the
# newest CHANGELOG.md section a tag would publish.
#
# Environment: GORELEASER and CYCLONEDX (pinned module@version, from the Makefile), GO.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
: "${GORELEASER:?GORELEASER (module@version) is not set; run make release-check}"
: "${CYCLONEDX:?CYCLONEDX (module@version) is not set; run make release-check}"

# cyclonedx-gomod, which GoReleaser's sboms step runs from PATH.
tools="$PWD/.tools/bin"
mkdir -p "$tools"
GOBIN="$tools" "$GO" install "$CYCLONEDX"
export PATH="$tools:$PATH"

# GoReleaser reads the commit only with a remote configured (`git ls-remote --get-url`);
# without one (a worktree, a bare local clone) a snapshot would say commit "none". The
# repository itself stands in, for GoReleaser's git reads only: nothing is fetched or written.
gitenv=()
if [ -z "$(git remote)" ]; then
  gitenv=(GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0="$PWD")
fi
goreleaser() { env ${gitenv[@]+"${gitenv[@]}"} "$GO" run "$GORELEASER" "$@"; }

goreleaser check
# RELEASE_TARGETS=host (make release-check, in make test) snapshots this machine's platform
# only: each other platform compiles the whole module graph again, minutes on two cores.
# RELEASE_TARGETS=all (make release-check-all; the scheduled release-check workflow, and
# every tag's release) builds every platform .goreleaser.yaml names.
config=.goreleaser.yaml
case "${RELEASE_TARGETS:-all}" in
  all) ;;
  host)
    host="$("$GO" env GOOS)_$("$GO" env GOARCH)"
    config="$(mktemp -d)/goreleaser-host.yaml"
    trap 'rm -rf "$(dirname "$config")"' EXIT
    # The targets list, narrowed to the host's: every other key as the release has it.
    awk -v host="$host" '
      /^    targets:$/ { print; print "      - " host; skip = 1; next }
      skip && /^      - / { next }
      { skip = 0; print }
    ' .goreleaser.yaml >"$config"
    grep -q "^      - $host\$" "$config" || { echo "release-check: $host is not a target of .goreleaser.yaml" >&2; exit 1; }
    export ROADMAP_RELEASE_TARGETS="$("$GO" env GOOS)/$("$GO" env GOARCH)"
    ;;
  *) echo "release-check: RELEASE_TARGETS is host or all, not ${RELEASE_TARGETS}" >&2; exit 2 ;;
esac
goreleaser release --snapshot --clean --skip=publish --config "$config"

version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
commit=$(git rev-parse HEAD)
bin=$(ls dist/roadmap_"$("$GO" env GOOS)"_"$("$GO" env GOARCH)"*/roadmap)
got=$("$bin" version)
echo "$bin version: $got"
# ", modified" after the commit: a snapshot of a work tree with changes, when Go stamped it.
case "$got" in
  "roadmap v$version ($commit) "* | "roadmap v$version ($commit, modified) "*) ;;
  *)
    echo "release-check: $bin does not print the snapshot's version and commit (roadmap v$version ($commit) …)" >&2
    exit 1
    ;;
esac
# And the notes a tag would publish: CHANGELOG.md's newest version has its section and link
# line (TestChangelogVersions), which release.yml refuses a tag without.
ROADMAP_RELEASE_DIST="$PWD/dist" "$GO" test -count=1 -run '^(TestInstallGoReleaserDist|TestChangelogVersions|TestExamplesNameTheRelease)$' ./scripts
