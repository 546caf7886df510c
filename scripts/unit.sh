#!/usr/bin/env bash
# The unit phase of `make test` (docs/testing.md): every package's tests as a queue of jobs,
# the longest first, run by one scheduler with as many slots as the machine has cores (two
# here), so both cores stay busy to the end and never more runs at once than they can carry.
#
#   scripts/unit.sh [make-target ...]
#
# The make targets named (lint, from `make test`; eval, when named, as make eval-test runs it) join the queue as
# jobs of their own, placed by how long each takes.
#
# What runs under -race: every package but internal/cli, internal/implement and those in NORACE.
# The NORACE packages start no goroutine and hold no lock in their own code, so -race found
# nothing there but cost their tests several times their time. internal/cli's and
# internal/implement's tests drive whole commands and Jobs in process (internal/cli took 810 s
# under -race; internal/implement 193 CPU s against about 130 without): the code they drive
# (the kernel, the runners, the fakes, the sandbox, the demo, where parallel groups run at
# once: implement's own goroutines are its parallel groups', which TestParallelGroupsDemo
# plays) is under -race through its own packages' tests, and the nightly race sweep
# (.github/workflows/race-sweep.yml) runs every package under -race: RACE_ALL=1 does that here.
#
# The whole Jobs of TestHostileAgent (internal/cli: one for each of its 17 attacks, about 95
# CPU s) and of the test strength (internal/cli TestCITestStrength, internal/implement
# TestTestStrengthRepairRound and TestReviewRepairTestStrength: the Go toolchain on every
# mutant, about 55), roadmap try's plays of two whole items (internal/cli TestTryOwnRepository
# and TestTryNeverWritesRemote, one Go and one Python play, about 40 CPU s), and internal/cli's eval commands (TestEval*: the golden suites through the
# CLI, about 35), are not played here: `make jobs-test` and `make eval-test` play them, and
# .ci/run runs both beside the e2e, on every change (docs/testing.md).
#
# The demo's plays of one item (TestDemo, TestDashboardRequestBudget, TestPythonItem; and
# TestDemoOutputForPeople and TestRequestCountsAgree, which read TestDemo's play, in the same
# job) play whole items with the test binary as roadmap, so under -race every Job of them ran
# race-instrumented (145 s, 49 s without); they run no code at once that the package's other
# tests do not: TestParallelGroupsDemo (groups at once) and TestTrioWorld (three items at once)
# stay under -race.
#
# The fault suite's whole histories (TestFaultsRun, seed 1's cover; TestFaultsFirstSeed,
# TestProcessSample, TestProcessFindsPending, TestRecoveryNeedsEvidence, the stage report
# histories) are not played here: `make faults-test` plays them, and .ci/run runs it beside the
# e2e with the other fault covers, keyed on the commit (docs/testing.md).
#
# Each job's output is printed whole when it ends, with how long it took. A try with three
# streams at once on two cores (2026-12-06) overloaded them: internal/cli and TestFaultsRun each
# ran past the 30-minute timeout. UNIT_SLOTS sets the slots.
set -uo pipefail
export LC_NUMERIC=C # `times` prints a decimal point
cd "$(dirname "$0")/.."
GO=${GO:-go}
TIMEOUT=${TIMEOUT:-30m}
# A binary built with -race sleeps a second as it exits, by default, so that races on other
# threads at exit still print (the race detector's atexit_sleep_ms). Every test binary and
# every test binary re-run as roadmap (internal/demo, internal/faults) paid it: a core idle for
# about 40 s of the two jobs of small packages alone. A race is still reported when it
# happens, and go test fails the test that had it.
export GORACE=${GORACE:-atexit_sleep_ms=0}
module=$($GO list -m) || exit 2

if [ "${RACE_ALL:-0}" = 1 ]; then
	$GO test -trimpath -race -count=1 -timeout "$TIMEOUT" ./...
	exit $?
fi

# Each slot is one core, so every job's processes (its test binary and the go commands, Jobs
# and worlds it starts) run with GOMAXPROCS=1 unless GOMAXPROCS is set: with two jobs of
# GOMAXPROCS=2 on two cores, Go's schedulers spun for work on a core the other job held.
# Measured with internal/implement (-race) beside internal/strength and internal/git
# (2026-12-07): 304 CPU s and 166 s of wall with the default, 277 and 153 with 1. A test
# marked t.Parallel then runs one at a time (go test's -parallel follows GOMAXPROCS); the
# goroutines of one process still interleave, and -race still sees what they share.
export GOMAXPROCS=${GOMAXPROCS:-1}

# Packages whose own (non-test) code starts no goroutine, uses no channel and holds no lock.
# PURE are the small ones of them; they share one job (2026-12-07: 18 more joined, -race's
# compile and link of each test binary saved).
PURE="internal/plan internal/redact internal/failure internal/nofollow internal/text internal/retry internal/unidiff internal/verdict internal/inputerr internal/waves internal/ledger internal/citriage internal/ready internal/report/decide internal/report/command internal/symbols internal/event internal/record internal/items internal/metrics internal/prbody internal/config internal/explain internal/tracker internal/next internal/issueref internal/blockers"
# PLAIN are the larger packages whose own code has no concurrency either (no goroutine, channel,
# lock or atomic; 2026-12-07, a grep of their non-test files): their tests start fakes and
# processes, whose concurrency is the fakes' and the kernel's, under -race in their own
# packages. Without -race's compile, link and run of each they share one job.
PLAIN="internal/adopt internal/agent internal/checks internal/claims internal/console internal/dashboard internal/deptest internal/job internal/policy internal/prcheck internal/prfix internal/progress internal/recordstore internal/review scripts tools/cilayout tools/mutants tools/realset"
NORACE="internal/git internal/strength $PURE $PLAIN"
# Packages long enough to be jobs of their own; the rest share two jobs.
# roadmap-dev's own tests (its eval fetch: go test of a third party's module behind the
# boundary, about 80 CPU s) run with the rest of the proving floor, beside make e2e in .ci/run
# (make dev-test), not here: make test proves the product and the house.
PROVING="tools/devcli"
ALONE="internal/cli internal/implement internal/eval internal/sandbox internal/stage internal/demo internal/faults tools/faultproc $PROVING $NORACE"

exclude="$module/vendor"
for p in $ALONE; do
	exclude="$exclude|$module/$p"
done
rest=$($GO list ./... | grep -Evx "$exclude" | sed "s|^$module|.|") || exit 2
# The rest in two jobs, alternately, so neither is the queue's tail.
rest1="" rest2="" n=0
for p in $rest; do
	if [ $((n % 2)) -eq 0 ]; then rest1="$rest1 $p"; else rest2="$rest2 $p"; fi
	n=$((n + 1))
done

names=() cmds=() secs=() waits=()
# job NAME SECONDS CMD...: queue CMD (its words quoted as given), expected to take SECONDS.
# SECONDS with a w after it (47w): the job mostly waits (its tests wait on the kernel, not
# the CPU: internal/sandbox used 11 CPU-s in 46 s) and runs beside the slots, one such job at
# a time, so a core is not held by a job that leaves it idle.
job() {
	local name=$1 est=$2 cmd=""
	shift 2
	printf -v cmd '%q ' "$@"
	names+=("$name")
	secs+=("${est%w}")
	if [ "$est" != "${est%w}" ]; then waits+=(1); else waits+=(0); fi
	cmds+=("$cmd")
}
# go vet is lint's (make test runs `go vet ./...` as a job of this queue, and make check runs
# it): go test's own vet pass of every package would be the same checks a second time.
# -trimpath: the build cache's keys then hold no checkout's path, so a clean clone in a new
# folder (CI's) reuses what an earlier run on the machine compiled instead of compiling every
# package of the module again, each twice (with and without -race): about 100 CPU-s.
gotest() { echo "$GO" test -trimpath -vet=off -count=1 -timeout "$TIMEOUT"; }
race() { echo "$GO" test -trimpath -vet=off -race -count=1 -timeout "$TIMEOUT"; }

# The jobs and about how long each takes on two cores beside another job (2026-12-06): the
# queue runs the longest first. The -run and -skip patterns are written out: tools/cilayout
# reads them (TestNothingDroppedFromCI).
# shellcheck disable=SC2046,SC2086 # the go test command line and package lists, one word each
{
	job "internal/cli" 230 $(gotest) -skip '^(TestHostileAgent|TestCITestStrength|TestTryOwnRepository|TestTryNeverWritesRemote|TestEvalImplement|TestEvalStage|TestEvalImplementRealCase|TestEvalStageRealCase|TestEvalFloorFailsBelow|TestEvalProvider|TestEvalGates)$' ./internal/cli
	job "internal/implement" 180 $(gotest) -skip '^(TestTestStrengthRepairRound|TestReviewRepairTestStrength)$' ./internal/implement
	job "internal/strength" 130 $(gotest) ./internal/strength
	job "the other packages, 1 of 2 (-race)" 120 $(race) -p 1 $rest1
	job "the other packages, 2 of 2 (-race)" 120 $(race) -p 1 $rest2
	job "internal/eval (-race)" 60 $(race) -skip '^TestEvalImplementReport$' ./internal/eval
	job "the demo's one-item plays" 75 $(gotest) -run '^(TestDemo|TestDashboardRequestBudget|TestDemoOutputForPeople|TestRequestCountsAgree|TestPythonItem)$' ./internal/demo
	job "internal/git" 55 $(gotest) ./internal/git
	job "internal/sandbox (-race)" 47w $(race) ./internal/sandbox
	job "internal/demo (-race)" 47 $(race) -skip '^(TestDemo|TestDashboardRequestBudget|TestDemoOutputForPeople|TestRequestCountsAgree|TestPythonItem)$' ./internal/demo
	job "internal/stage (-race)" 38 $(race) ./internal/stage
	job "internal/faults (-race)" 19 $(race) -skip '^(TestFaultsRun|TestFaultsFirstSeed|TestRecoveryNeedsEvidence|TestStageReportKeepsKilledSpend|TestStageReportRerunDispatchesOnce|TestRequestsIndependentOfGroups|TestFreshJobManyComments)$' ./internal/faults
	# The process histories' tests run real roadmap processes: make faults-test plays them.
	job "tools/faultproc (-race)" 5 $(race) -skip '^(TestProcessSample|TestProcessFindsPending)$' ./tools/faultproc
	job "the small packages without concurrency" 25 $(gotest) ./internal/plan ./internal/redact ./internal/failure ./internal/nofollow ./internal/text ./internal/retry ./internal/unidiff ./internal/verdict ./internal/inputerr ./internal/waves ./internal/ledger ./internal/citriage ./internal/ready ./internal/report/decide ./internal/report/command ./internal/symbols ./internal/event ./internal/record ./internal/items ./internal/metrics ./internal/prbody ./internal/config ./internal/explain ./internal/tracker ./internal/next ./internal/issueref ./internal/blockers
	job "the larger packages without concurrency" 60 $(gotest) ./internal/adopt ./internal/agent ./internal/checks ./internal/claims ./internal/console ./internal/dashboard ./internal/deptest ./internal/job ./internal/policy ./internal/prcheck ./internal/prfix ./internal/progress ./internal/recordstore ./internal/review ./scripts ./tools/cilayout ./tools/mutants ./tools/realset
}
# make eval, then the tests that judge its implement report (bin/eval-implement.json): each
# golden implement case plays once per run, and internal/eval's job skips the test.
eval_and_report() {
	make --no-print-directory eval EVAL_REPORT=bin/eval-implement.json &&
		ROADMAP_EVAL_IMPLEMENT_REPORT=$PWD/bin/eval-implement.json $(race) -run '^TestEvalImplementReport$' ./internal/eval
}
# The make targets named, with what they take: eval 130 s, lint 40 s (staticcheck in a clean
# clone: a lower guess put it last, with the other core idle beside it).
for target in "$@"; do
	case $target in
	eval)
		job "make eval, then TestEvalImplementReport on its report" 130 eval_and_report
		continue
		;;
	lint) est=40 ;;
	release-check) est=27 ;;
	*) est=60 ;;
	esac
	job "make $target" "$est" make --no-print-directory "$target"
done
# The order: longest first (a stable sort on the estimate).
mapfile -t order < <(for i in "${!secs[@]}"; do printf '%s\t%s\n' "${secs[i]}" "$i"; done | sort -s -t$'\t' -k1,1nr | cut -f2)

slots=${UNIT_SLOTS:-$(nproc 2>/dev/null || echo 2)}
[ "$slots" -ge 1 ] 2>/dev/null || slots=2
tmp=$(mktemp -d)
declare -A job_of
cleanup() {
	for pid in "${!job_of[@]}"; do
		kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== unit: ${#names[@]} jobs, $slots at a time"
SECONDS=0
left=("${order[@]}") # the queue's jobs not started yet, in order
busy=0 waiting=0 failed=""
# start I: run job I in the background, its output to its own file.
start() {
	local i=$1
	# Each job in a process group of its own (set -m), so an interrupt ends all it started.
	set -m
	(
		s=$SECONDS
		eval "${cmds[i]}"
		r=$?
		# `times`' second line: the user and system time of what the job ran.
		times >"$tmp/$i.times"
		cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= NF; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] } printf "%.0f", s }' "$tmp/$i.times")
		echo "== ${names[i]} took $((SECONDS - s)) s and $cpu CPU-s (ended at $SECONDS s)"
		exit $r
	) >"$tmp/$i" 2>&1 &
	set +m
	job_of[$!]=$i
}
while [ "${#left[@]}" -gt 0 ] || [ "${#job_of[@]}" -gt 0 ]; do
	# Start what may start, first in the queue first: a job that uses a core while a slot is
	# free, a job that mostly waits while none other that waits runs.
	rest_left=()
	for i in "${left[@]}"; do
		if [ "${waits[i]}" = 1 ] && [ "$waiting" -eq 0 ]; then
			start "$i"
			waiting=1
		elif [ "${waits[i]}" = 0 ] && [ "$busy" -lt "$slots" ]; then
			start "$i"
			busy=$((busy + 1))
		else
			rest_left+=("$i")
		fi
	done
	left=("${rest_left[@]}")
	done_pid=""
	wait -n -p done_pid
	r=$?
	[ -n "$done_pid" ] || continue
	i=${job_of[$done_pid]}
	unset "job_of[$done_pid]"
	if [ "${waits[i]}" = 1 ]; then waiting=0; else busy=$((busy - 1)); fi
	cat "$tmp/$i"
	[ "$r" -eq 0 ] || failed="$failed; ${names[i]}"
done
echo "== unit took $SECONDS s"
if [ -n "$failed" ]; then
	echo "unit: failed:${failed#;}" >&2
	exit 1
fi
