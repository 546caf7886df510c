#!/usr/bin/env bash
# The unit phase of `make test` (docs/testing.md), in two phases that each keep both cores
# busy without running more at once than the machine has cores for:
#
#   1. every package under -race (go test runs two at a time), less internal/cli, the
#      packages in NORACE, TestFaultsRun and the demo's plays of one item;
#   2. side by side: internal/cli without -race, and the NORACE packages then the demo's
#      one-item plays without -race.
#
# TestFaultsRun (the fault suite's per-change cover of seed 1) is not played here: .ci/run
# plays it beside the e2e with the other fault covers, keyed on the commit (docs/testing.md);
# `go test -run '^TestFaultsRun$' ./internal/faults` plays it alone.
#
# internal/cli's tests drive whole commands, Jobs and worlds in process; under -race they
# took 810 s. The NORACE packages start no goroutine and hold no lock in their own code, so
# -race found nothing there but cost their tests several times their time. The code
# internal/cli drives (the kernel, the runners, the fakes, the sandbox, the demo, where
# parallel groups run at once) is under -race in phase 1 through its own packages' tests,
# and the nightly race sweep (.github/workflows/race-sweep.yml) runs every package under
# -race: RACE_ALL=1 does that here.
#
# The demo's tests play whole items with the test binary as roadmap, so under -race every
# Job of them runs race-instrumented: internal/demo took 145 s under -race, 49 s without.
# The plays of one item (the demo's, the Python item's) run no code at once that the
# package's other tests do not: TestParallelGroupsDemo (groups at once) and TestTrioWorld
# (three items at once) stay under -race in phase 1.
#
# A try with three streams at once (2026-12-06) overloaded the two cores: internal/cli
# and TestFaultsRun each ran past the 30-minute timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TIMEOUT=${TIMEOUT:-30m}
module=$($GO list -m) || exit 2

if [ "${RACE_ALL:-0}" = 1 ]; then
	$GO test -race -count=1 -timeout "$TIMEOUT" ./...
	exit $?
fi

# Packages whose own (non-test) code starts no goroutine, uses no channel and holds no lock.
NORACE="internal/plan internal/git internal/strength internal/redact internal/failure internal/nofollow"
norace_paths=""
exclude="$module/internal/cli"
for p in $NORACE; do
	norace_paths="$norace_paths ./$p"
	exclude="$exclude|$module/$p"
done
race_pkgs=$($GO list ./... | grep -Evx "$exclude") || exit 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
failed=""

SECONDS=0
echo "== phase 1: every package but internal/cli and$norace_paths under -race"
# shellcheck disable=SC2086 # a list of import paths, one per word
$GO test -race -count=1 -timeout "$TIMEOUT" -skip '^(TestFaultsRun|TestDemo|TestDashboardRequestBudget|TestPythonItem)$' $race_pkgs || { rc=1; failed=" the -race run"; }
echo "== phase 1 took $SECONDS s"

echo "== phase 2: internal/cli beside$norace_paths and the demo's one-item plays, without -race"
phase2=$SECONDS
# Each stream says how long it took, so the table .ci/run prints can be read down to them.
{ s=$SECONDS; $GO test -count=1 -timeout "$TIMEOUT" ./internal/cli; r=$?; echo "== internal/cli took $((SECONDS - s)) s"; exit $r; } >"$tmp/cli" 2>&1 &
cli=$!
# shellcheck disable=SC2086
{
	s=$SECONDS
	$GO test -count=1 -timeout "$TIMEOUT" $norace_paths
	r=$?
	echo "== the packages without -race took $((SECONDS - s)) s"
	s=$SECONDS
	$GO test -count=1 -timeout "$TIMEOUT" -run '^(TestDemo|TestDashboardRequestBudget|TestPythonItem)$' ./internal/demo
	r2=$?
	echo "== the demo's one-item plays took $((SECONDS - s)) s"
	[ $r -eq 0 ] && exit $r2
	exit $r
} >"$tmp/rest" 2>&1 &
rest=$!
wait "$rest" || { rc=1; failed="$failed NORACE-or-demo-plays"; }
cat "$tmp/rest"
wait "$cli" || { rc=1; failed="$failed internal/cli"; }
cat "$tmp/cli"
echo "== phase 2 took $((SECONDS - phase2)) s"
[ -z "$failed" ] || echo "unit: failed:$failed" >&2
exit "$rc"
