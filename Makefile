# roadmap — build and test. `make test` is the one test command (README, .ci/run).
# Tools are pinned here and fetched from the Go module proxy by `go run pkg@version`,
# so a fresh machine with only Go can run every target.

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT  := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# The release tools: GoReleaser by `go run` (never in go.mod, whose modules it would multiply;
# release.yml pins the same version), cyclonedx-gomod installed into .tools/bin for its SBOMs.
GORELEASER  := github.com/goreleaser/goreleaser/v2@v2.15.1
CYCLONEDX   := github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
FUZZTIME    ?= 10s
BIN         := bin/roadmap
# The proving floor's binary (cmd/roadmap-dev): the process fault histories and the real-world
# set's fetcher, kept out of the roadmap binary users run.
DEV_BIN     := bin/roadmap-dev

.PHONY: build test jobs-test eval eval-test release-check lint vet fmt-check mod-tidy actionlint unit fuzz bench clean demo npm-tools faults faults-test faults-process build-dev dev-test

# -trimpath: the binary names no checkout's folder, and a clean clone in a new one reuses the
# build cache (scripts/unit.sh). The ldflags name the version (the tag, or git describe's
# vX.Y.Z-N-g<sha>, -dirty with local changes) and the full commit, as GoReleaser's do:
# `roadmap version` prints them and `roadmap init` pins its workflows to that commit. Outside
# a git checkout both are empty and the binary reads what Go stamped, else says dev.
VERSION     ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS     := $(if $(VERSION),-X github.com/roadmap-dev/roadmap/internal/cli.Version=$(VERSION)) \
               $(if $(COMMIT),-X github.com/roadmap-dev/roadmap/internal/cli.Commit=$(COMMIT))
build:
	$(GO) build -trimpath -ldflags '$(strip $(LDFLAGS))' -o $(BIN) ./cmd/roadmap

# roadmap-dev beside roadmap: `roadmap-dev faults process` runs the roadmap binary next to it.
build-dev: build
	$(GO) build -trimpath -o $(DEV_BIN) ./cmd/roadmap-dev

# The unit phase's scheduler (scripts/unit.sh) also runs lint and eval, as jobs of its queue,
# so the two cores stay busy to the end. The release snapshot (make release-check) is not a
# test of the code: .ci/run builds it beside the e2e.
test: npm-tools
	GO=$(GO) RACE_ALL=0 TIMEOUT=$(UNIT_TIMEOUT) scripts/unit.sh lint

# The golden suites on the replay model (make eval), then TestEvalImplementReport on the
# implement report they kept, so each golden implement case plays once per run, then the eval
# commands' own tests (internal/cli TestEval*: the suites through the CLI, with their floors). .ci/run plays
# it beside the e2e (docs/testing.md): it left make test to keep that inside its 10 minutes.
eval-test: npm-tools
	$(MAKE) --no-print-directory eval EVAL_REPORT=bin/eval-implement.json
	ROADMAP_EVAL_IMPLEMENT_REPORT=$(CURDIR)/bin/eval-implement.json $(GO) test -trimpath -vet=off -race -count=1 -timeout $(UNIT_TIMEOUT) -run '^TestEvalImplementReport$$' ./internal/eval
	$(GO) test -trimpath -vet=off -count=1 -timeout $(UNIT_TIMEOUT) -run '^(TestEvalImplement|TestEvalStage|TestEvalImplementRealCase|TestEvalStageRealCase|TestEvalFloorFailsBelow|TestEvalProvider|TestEvalGates)$$' ./internal/cli

# The three golden suites (docs/eval.md) on the replay model, each held to its floor in
# .github/roadmap.yml (eval.gates.floor, eval.stage.floor, eval.implement.floor): exit 1 below.
# About 1 s, 5 s and 1–5 minutes on two cores (docs/eval.md). The implement suite's report
# (its progress lines are on stderr) is kept as JSON in EVAL_REPORT: make test's
# TestEvalImplementReport reads it, so each golden case plays once per run.
EVAL_REPORT ?= bin/eval-implement.json
# The implement set's Python case (weak-test-python) runs `python3 -m pytest`: with the PATH's
# python3 when it has pytest, else with Debian's /usr/bin first (python3-pytest's; a pyenv
# python3 ahead of it may have none), as .ci/run and the Python tests find it.
PYTEST_PATH = $(shell python3 -m pytest --version >/dev/null 2>&1 || echo /usr/bin:)
eval: build npm-tools
	./$(BIN) eval gates --config .github/roadmap.yml
	./$(BIN) eval stage --config .github/roadmap.yml
	rm -f $(EVAL_REPORT)
	PATH="$(PYTEST_PATH)$$PATH" ./$(BIN) eval implement --config .github/roadmap.yml --json >$(EVAL_REPORT).part
	mv $(EVAL_REPORT).part $(EVAL_REPORT)
	@echo "eval implement: passed its floor; the report is $(EVAL_REPORT)"

# GOFLAGS=-trimpath reaches the `go list` staticcheck runs, whose compiles then share the
# build cache's keys across folders: in a clean clone in a new folder staticcheck took 58 s
# and 110 CPU-s without it, 2 s with it.
lint: fmt-check vet actionlint mod-tidy
	GOFLAGS=-trimpath $(GO) run $(STATICCHECK) ./...

# go.mod and go.sum must say what the code imports; a stale `// indirect` misleads readers.
mod-tidy:
	$(GO) mod tidy -diff

# actionlint checks every workflow, and through them the local actions they use.
actionlint:
	ACTIONLINT=$(ACTIONLINT) scripts/actionlint.sh

fmt-check:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet -trimpath ./...

# The unit phase (scripts/unit.sh, docs/testing.md): one queue of go test jobs, the longest
# first, on as many slots as cores; every package under -race but internal/cli and the few
# whose own code has no concurrency. The fault suite's whole histories are `make faults-test`,
# which .ci/run plays with the other fault covers. RACE_ALL=1 runs every package and test
# under -race, as the nightly race sweep does.
RACE_ALL ?= 0
UNIT_TIMEOUT ?= 30m

unit: npm-tools
	GO=$(GO) RACE_ALL=$(RACE_ALL) TIMEOUT=$(UNIT_TIMEOUT) scripts/unit.sh

# The fast loop for developers (README, "Development"; scripts/check.sh): gofmt, go vet ./...,
# and go test -short with Go's test cache on the packages the change touched (CHECK_ALL=1: every
# package), under which the heavy suites skip. `make test` is still the proof a change is done.
CHECK_ALL ?= 0
check: npm-tools
	GO=$(GO) CHECK_ALL=$(CHECK_ALL) scripts/check.sh

.PHONY: check

# Pinned npm tools (the OpenSpec CLI, GitHub's REST API description) into
# tools/npm/node_modules; the tests that use them skip, saying so, only when Node is absent.
npm-tools:
	@if command -v node >/dev/null 2>&1; then scripts/npm-tools.sh >/dev/null; \
	else echo "npm-tools: Node.js is absent; the OpenSpec and OpenAPI agreement tests will skip" >&2; fi

# Short runs of every fuzzer in the tree (FUZZTIME each).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME); \
	  done; \
	done

# The fault-injection suite (docs/reliability.md): exits non-zero on any violation.
# FAULT_SEEDS seeds from FAULT_FIRST_SEED, every history twice (the scheduled sweep,
# faults-sweep.yml). FAULT_COVER=1 plays each seed's per-change cover instead (docs/testing.md):
# one history of every fault kind and recovery branch, chosen by FAULT_KEY (the commit), and
# FAULT_EXTRA more played twice. .ci/run plays seed 1's cover as a test (make faults-test:
# TestFaultsRun, with the same key, which also fails on a kind of the tables never injected),
# with the suite's other whole-history tests; another seed's cover is
# `make faults FAULT_FIRST_SEED=2 FAULT_SEEDS=1 FAULT_COVER=1` (the nightly sweep plays whole seeds).
FAULT_SEEDS ?= 2
FAULT_FIRST_SEED ?= 1
FAULT_COVER ?= 0
FAULT_KEY ?= $(shell git rev-parse HEAD 2>/dev/null)
FAULT_EXTRA ?= 2
faults-test:
	ROADMAP_FAULT_KEY='$(FAULT_KEY)' $(GO) test -trimpath -count=1 -timeout $(UNIT_TIMEOUT) -run '^(TestFaultsRun|TestFaultsFirstSeed|TestProcessSample|TestProcessFindsPending|TestRecoveryNeedsEvidence|TestStageReportKeepsKilledSpend|TestStageReportRerunDispatchesOnce|TestRequestsIndependentOfGroups|TestFreshJobManyComments)$$' ./internal/faults ./tools/faultproc

# The whole Jobs scripts/unit.sh leaves to .ci/run, which plays them beside the e2e on every
# change: the hostile agent's attacks (internal/cli TestHostileAgent: a Job behind the boundary
# for each) and the test strength's Jobs, which run the Go toolchain on every mutant
# (internal/cli TestCITestStrength; internal/implement TestTestStrengthRepairRound,
# TestReviewRepairTestStrength), and roadmap try's plays of a Go and a Python checkout
# (internal/cli TestTryOwnRepository, TestTryNeverWritesRemote: about 40 s, 40 CPU s).
jobs-test:
	$(GO) test -trimpath -vet=off -count=1 -timeout $(UNIT_TIMEOUT) -run '^(TestHostileAgent|TestCITestStrength|TestTestStrengthRepairRound|TestReviewRepairTestStrength|TestTryOwnRepository|TestTryNeverWritesRemote)$$' ./internal/cli ./internal/implement

# roadmap-dev's own tests (the proving floor's binary: its eval fetch runs a module's tests
# behind the boundary); .ci/run plays them beside make e2e.
dev-test:
	$(GO) test -trimpath -vet=off -count=1 -timeout $(UNIT_TIMEOUT) ./tools/devcli

faults:
	$(GO) run -trimpath ./cmd/roadmap faults run --seeds $(FAULT_SEEDS) --first-seed $(FAULT_FIRST_SEED) \
	  $(if $(filter 1,$(FAULT_COVER)),--cover --key '$(FAULT_KEY)' --sample $(FAULT_EXTRA))

# The process histories: real roadmap processes faulted from outside, by roadmap-dev (the
# harness is not in the roadmap binary; tools/faultproc). FAULT_SAMPLE plays that
# many spread over the sweep (0: all); with FAULT_COVER=1 (.ci/run) one of every kind not
# pending, chosen by FAULT_KEY, and FAULT_SAMPLE more. The scheduled sweep
# (.github/workflows/faults-sweep.yml) plays them all, pending kinds included
# (FAULT_PROCESS_ARGS=--pending).
FAULT_SAMPLE ?= 0
FAULT_PROCESS_ARGS ?=
faults-process: build-dev
	./$(DEV_BIN) faults process --binary ./$(BIN) --sample $(FAULT_SAMPLE) \
	  $(if $(filter 1,$(FAULT_COVER)),--cover --key '$(FAULT_KEY)') $(FAULT_PROCESS_ARGS)

# The whole life of an item, locally, against the fakes (README quick start).
demo: build
	./$(BIN) demo

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin dist

# The release, short of publishing (docs/release.md): `goreleaser check`, a snapshot of
# .goreleaser.yaml into dist/ (the host platform's archive, checksums.txt, the SBOM; no tag
# needed), the host's binary must print the snapshot's version, and TestInstallGoReleaserDist
# installs the archive through scripts/install-roadmap.sh. release-check-all snapshots every
# platform (the scheduled release-check workflow runs it; a tag's release builds them all).
release-check:
	RELEASE_TARGETS=host GO=$(GO) GORELEASER=$(GORELEASER) CYCLONEDX=$(CYCLONEDX) scripts/release-check.sh

release-check-all:
	RELEASE_TARGETS=all GO=$(GO) GORELEASER=$(GORELEASER) CYCLONEDX=$(CYCLONEDX) scripts/release-check.sh

.PHONY: release-check-all

# Pinned command-line tools (act) into ./.tools/bin, from the Go module proxy.
tools:
	GO=$(GO) bash scripts/tools.sh

# The end-to-end run: the real workflows under act on the host, offline, against the fake
# GitHub and the replay model (docs/e2e.md); -v prints its progress. Per change (.ci/run) the
# scenarios listed in e2e/scheduled_test.go skip, and the tests listed beside each run in their
# stead; E2E_ALL=1 (the nightly e2e-sweep.yml) runs every scenario.
E2E_ALL ?= 0
e2e: tools
	ROADMAP_E2E=1 ROADMAP_E2E_ALL=$(E2E_ALL) GO=$(GO) $(GO) test -count=1 -timeout 60m -v ./e2e/...

.PHONY: tools e2e

# The real-world set's Go cases get their code from the Go module proxy and are verified the
# SWE-bench way: F2P fail at the base release, pass at the fix (docs/eval.md, "The real-world
# set with code"). It needs the module proxy, like `make tools`, so `make test` leaves it out.
eval-real: build-dev
	./$(DEV_BIN) eval fetch --check

.PHONY: eval-real

# The mutation check of the seed criteria's tests (docs/mutants.md): each listed break of the
# code must make its named tests fail. `make mutants` (.ci/run, per change) plays the
# mutations whose file or named tests the change touched (all when it touched tools/mutants;
# one per file when no change is detected) and checks every mutation's text is still in
# place; `make mutants-all` (nightly, mutants.yml) plays them all, about 14 minutes on two cores.
MUTANTS_ARGS ?=
mutants:
	$(GO) run ./tools/mutants -changed $(MUTANTS_ARGS)

mutants-all:
	$(GO) run ./tools/mutants $(MUTANTS_ARGS)

.PHONY: mutants mutants-all
