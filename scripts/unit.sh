#!/usr/bin/env bash
# The unit phase of `make test` (docs/testing.md): every package's tests, three streams at
# once so both cores stay busy to the end.
#
#   1. every package under -race but internal/cli, TestFaultsRun skipped;
#   2. internal/cli without -race;
#   3. TestFaultsRun (about a hundred whole histories in process) without -race.
#
# internal/cli's tests drive whole commands, Jobs and worlds in process; under -race they
# took 810 s of one core while the other sat idle, most of `.ci/run`'s overrun of its
# 40 minutes. The packages they drive (the kernel, the runners, the fakes, git, the
# sandbox) run under -race in stream 1 with their own tests, and the scheduled race sweep
# (.github/workflows/race-sweep.yml) runs every package, internal/cli and TestFaultsRun
# included, under -race: RACE_ALL=1 does that here.
#
# Each stream's output is kept apart and printed whole when it ends, so a failure reads
# as one block; the script exits non-zero when any stream failed, naming it.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TIMEOUT=${TIMEOUT:-30m}
module=$($GO list -m) || exit 2

if [ "${RACE_ALL:-0}" = 1 ]; then
	$GO test -race -count=1 -timeout "$TIMEOUT" ./...
	exit $?
fi

pkgs=$($GO list ./... | grep -vx "$module/internal/cli") || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$GO test -count=1 -timeout "$TIMEOUT" ./internal/cli >"$tmp/cli" 2>&1 &
cli=$!
$GO test -count=1 -timeout "$TIMEOUT" -run '^TestFaultsRun$' ./internal/faults >"$tmp/faults" 2>&1 &
faults=$!

rc=0
failed=""
# shellcheck disable=SC2086 # pkgs is a list of import paths, one per word
$GO test -race -count=1 -timeout "$TIMEOUT" -skip '^TestFaultsRun$' $pkgs || { rc=1; failed=" the -race run"; }
wait "$cli" || { rc=1; failed="$failed internal/cli"; }
echo "== internal/cli (without -race)"
cat "$tmp/cli"
wait "$faults" || { rc=1; failed="$failed TestFaultsRun"; }
echo "== TestFaultsRun (without -race)"
cat "$tmp/faults"
[ -z "$failed" ] || echo "unit: failed:$failed" >&2
exit "$rc"
