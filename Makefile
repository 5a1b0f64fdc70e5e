# scale-preview Makefile. Three suites (docs/testing.md has what each runs
# and how long it takes):
#   make test        contributors' loop: gofmt, unit/CLI tests, conformance
#                    against the real 1.37 comparator and the recorded
#                    1.21/1.25/1.29/1.33 answers, the in-process oracles'
#                    short samples. No control plane, no goreleaser, no
#                    golangci-lint (make lint; make check runs it).
#   make check       CI (.ci/run): test + lint + the e2e suite on a real
#                    control plane (short sample) + packaging of this
#                    platform's archive.
#   make check-long  everything: full e2e, six-platform release snapshot,
#                    regenerated oracles, long conformance, fuzzing.
GO ?= go
BIN := bin/kubectl-scale_preview
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
LDFLAGS := -X github.com/scale-preview/scale-preview/pkg/version.Version=$(VERSION) -X github.com/scale-preview/scale-preview/pkg/version.Commit=$(COMMIT)

# Every build and test without cgo, as the release and the upstream control
# plane are built: one build cache entry per package for the tests, the
# e2e binaries, kubectl and the plugin (no second compile of client-go and
# k8s.io/kubernetes with other settings). Set CGO_ENABLED=1 to override.
CGO_ENABLED ?= 0
export CGO_ENABLED

.PHONY: build test check check-long unit conformance conformance-short conformance-long \
	e2e e2e-short e2e-check demo lint unit-full bench fuzz inprocess inprocess-check inprocess-long inprocess-record

# `go test` vets every package it builds and, for vet's facts, every
# dependency too: cold, that type-checks all of client-go and
# k8s.io/kubernetes a second time. golangci-lint's govet runs every vet
# analyzer in `lint`, so the tests skip theirs.
# No DWARF in compiled packages: go test links without it (-s -w) and the
# release strips it (-s -w), so it was never used, and it costs a quarter
# of the compile (the root module cold: 322 against 246 CPU-s). DEBUG_INFO=1
# keeps it, for a debugger.
DEBUG_INFO ?=
export GOFLAGS := $(strip $(GOFLAGS) -vet=off $(if $(DEBUG_INFO),,-gcflags=all=-dwarf=false))

# make test as a graph, not in waves: each step starts once what it needs
# is there, so both cores stay busy. First the root module compiles (every
# package and test package, `go list -export`: compiled, not linked) while
# the test module's dependencies download. Then the test module compiles
# (k8s.io/kubernetes and informers alone: the two modules build the same
# versions, test/internal/modsync) beside the root module's tests; its
# suites follow. Two go commands never compile the same package at once
# (each would do the work). -k: every suite runs even when another fails,
# so one run shows all. golangci-lint is not in make test: building it and
# type-checking k8s.io/kubernetes for its analyzers' facts were 40% of a
# cold run's CPU (docs/testing.md); make lint runs it, and so does make
# check (CI).
test:
	@$(MAKE) --no-print-directory -k -j4 test-fmt test-unit test-suites

.PHONY: compile-root compile-test-module test-module-download test-fmt test-unit test-suites \
	test-module lint-root lint-test-module fmt-check
compile-root:
	$(GO) list -deps -test -export ./... > /dev/null

# Only the modules make test's packages import (go list loads them): `go
# mod download` would also fetch and unpack the e2e suite's.
test-module-download:
	cd test && $(GO) list -deps -test ./conformance/ $(INPROCESS_PKGS) > /dev/null

compile-test-module: compile-root test-module-download
	cd test && $(GO) list -deps -test -export ./conformance/ $(INPROCESS_PKGS) > /dev/null

test-fmt: fmt-check

test-unit: compile-root
	@$(MAKE) --no-print-directory unit

test-suites: compile-test-module
	@$(MAKE) --no-print-directory test-module

# The test module's make-test suites in one go command, so that its
# packages compile and run side by side: conformance-short and inprocess
# (-parallel 4: its oracles mostly wait on fake APIs and clocks).
test-module:
	cd test && INPROCESS_SCENARIOS=$(INPROCESS_QUICK) $(GO) test -count=1 -v -short -parallel 4 -timeout 20m ./conformance/ $(INPROCESS_PKGS)
	cd test && $(GO) test -count=1 -short -run '^$$' -bench . -benchtime 1x ./conformance/

check: test lint unit-full inprocess-check e2e-check packaging-check

check-long: test e2e packaging-test oracles-check conformance-long inprocess-long fuzz-long

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-scale_preview

# Unit and CLI tests (-short: the random-fleet checks on smaller samples),
# then every engine and file-reader benchmark once in short mode so they
# keep compiling and running (figures come from `make bench` and
# docs/performance.md).
unit:
	$(GO) test -short ./...
	$(GO) test -short -run '^$$' -bench . -benchtime 1x ./pkg/engine/ ./pkg/source/

# The engine against k8s.io/kubernetes' own ActivePodsWithRanks (1.37,
# in process) and against the recorded answers of older releases
# (test/conformance/testdata/oracles). -short: 300 random pod sets per
# check instead of 3,000.
conformance-short:
	cd test && $(GO) test -count=1 -short -v ./conformance/
	cd test && $(GO) test -count=1 -short -run '^$$' -bench . -benchtime 1x ./conformance/

conformance-long:
	cd test && $(GO) test -count=1 -v -timeout 30m ./conformance/

conformance: conformance-long

# The real controllers in-process, compared with the plugin: ReplicaSet and
# Deployment on a strict fake API, seeded random mid-rollout scale-ins each
# repeated 50 times (docs/deployments.md; the long suite runs 1,000
# scenarios), and the HorizontalPodAutoscaler's recommendation on seeded
# random autoscalers (docs/autoscaler.md; 300 short, 2,000 long).
# make test runs the first INPROCESS_QUICK scenarios (its 2-minute warm
# budget); make check runs the -short default of 24 (docs/testing.md).
INPROCESS_QUICK ?= 12

INPROCESS_PKGS := ./inprocess/ ./hpa/ ./internal/... ./perf/

inprocess:
	cd test && INPROCESS_SCENARIOS=$(INPROCESS_QUICK) $(GO) test -count=1 -v -short -timeout 20m $(INPROCESS_PKGS)

# -tags kubelet: the kubelet's own code live (its eviction manager,
# threshold parsing and /configz scheme: 290 packages that make test does
# not compile, replaying test/inprocess/testdata/kubelet.json.gz instead;
# see eviction_record_test.go), its deterministic answers compared with
# the recording.
KUBELET_TESTS := ^TestEviction(Thresholds|Cases)?AgainstKubelet$$

inprocess-check:
	cd test && $(GO) test -count=1 -v -short -timeout 20m -run '^TestDeploymentAgainstControllers$$' ./inprocess/
	cd test && $(GO) test -count=1 -v -short -tags kubelet -run '$(KUBELET_TESTS)' ./inprocess/

# Rewrites test/inprocess/testdata/kubelet.json.gz, the kubelet's answers
# for the -short samples make test replays, after a change to what the
# eviction tests draw or to the kubelet.
inprocess-record:
	cd test && INPROCESS_RECORD=1 $(GO) test -count=1 -short -tags kubelet -run '$(KUBELET_TESTS)' ./inprocess/

# The 1,000 Deployments (and the 250 of three ReplicaSets shrinking at once
# drawn after every fourth) run in four processes of 250, 16 runs at a time
# each (the runs mostly wait on the fake API's latency); the first process
# also runs the other in-process tests. Logs: bin/inprocess-long-N.log.
INPROCESS_LONG_TEST := TestDeploymentAgainstControllers$$

inprocess-long:
	cd test && $(GO) test -count=1 -v -timeout 1h ./hpa/
	cd test && $(GO) test -c -tags kubelet -o ../bin/inprocess.test ./inprocess/
	@set -e; pids=""; for k in 0 1 2 3; do \
		run='$(INPROCESS_LONG_TEST)'; [ $$k -eq 0 ] && run='.'; \
		INPROCESS_FROM=$$((k*250)) INPROCESS_SCENARIOS=$$((k*250+250)) INPROCESS_PARALLEL=16 \
			sh -c 'cd test/inprocess && exec ../../bin/inprocess.test "$$@"' - -test.count=1 -test.v -test.timeout 3h -test.run "$$run" > bin/inprocess-long-$$k.log 2>&1 & pids="$$pids $$!"; \
	done; fail=0; for p in $$pids; do wait $$p || fail=1; done; \
	grep -h -E -- '^(--- FAIL|FAIL|ok|PASS)|deployment_test.go:[0-9]+: ([0-9]+ scenarios|certain fates checked|chances printed as a range|exact ties:)|(eviction_manager|eviction_thresholds|preempt_compare|score_oracle|job_oracle|rollout_case|rollout_oracle|scenario_three)_test.go:[0-9]+: ' bin/inprocess-long-*.log; \
	exit $$fail

# Starts etcd, kube-apiserver and kube-controller-manager (built from the Go
# module proxy) on loopback and compares predictions with real scale-ins.
e2e:
	cd test && E2E_REQUIRE_PLUGIN=1 E2E_HPA=1 $(GO) test -count=1 -v -timeout 150m ./e2e/

e2e-short:
	cd test && $(GO) test -count=1 -v -short -timeout 40m ./e2e/

# CI's sample: the -short scenarios, and a plugin that does not build is a
# failure rather than a skip.
e2e-check:
	cd test && E2E_REQUIRE_PLUGIN=1 $(GO) test -count=1 -v -short -timeout 40m ./e2e/

# A prediction from the shipped offline example; no cluster needed.
demo:
	$(GO) run ./cmd/kubectl-scale_preview -f examples/web.yaml deploy/web --replicas=3 -n shop --now 2025-01-01T12:00:00Z

# The root module's tests at full size (make check).
unit-full:
	$(GO) test ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/engine/

# --- fuzzing ---
# Runs every Fuzz* target of the root module for FUZZTIME each, found with
# `go test -list` (a new target needs no change here).
FUZZTIME ?= 10m

fuzz:
	@set -e; targets=$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ {f[n++]=$$1} /^ok / {for (i = 0; i < n; i++) print $$2 "," f[i]; n = 0}'); \
	if [ -z "$$targets" ]; then echo "fuzz: no Fuzz targets in the root module"; exit 0; fi; \
	for t in $$targets; do \
		pkg=$${t%%,*}; name=$${t#*,}; \
		echo "== fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) "$$pkg"; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=1m

# --- tools ---
# Linters and goreleaser are built from the Go module proxy into a
# repo-local tools dir, pinned. A stamp file names the installed version:
# changing a version reinstalls that tool (so does a missing binary).
# goreleaser v2.16.0 is the newest that builds with Go 1.26 (v2.18 needs
# Go 1.27); a cold build takes ~7-11 min on 2 cores.
GORELEASER_VERSION ?= v2.16.0
GOLANGCI_LINT_VERSION ?= v2.15.0
TOOLS_BIN := $(CURDIR)/bin/tools
GORELEASER := $(TOOLS_BIN)/goreleaser
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint
GORELEASER_STAMP := $(TOOLS_BIN)/.goreleaser-$(GORELEASER_VERSION)
GOLANGCI_LINT_STAMP := $(TOOLS_BIN)/.golangci-lint-$(GOLANGCI_LINT_VERSION)

# $(call go-tool,name,version,package)
define go-tool
$(TOOLS_BIN)/.$(1)-$(2): $$(if $$(wildcard $(TOOLS_BIN)/$(1)),,$(1)-missing)
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) CGO_ENABLED=0 $(GO) install $(3)@$(2)
	@rm -f $(TOOLS_BIN)/.$(1)-*
	@touch $$@
.PHONY: $(1)-missing
endef
$(eval $(call go-tool,goreleaser,$(GORELEASER_VERSION),github.com/goreleaser/goreleaser/v2))
$(eval $(call go-tool,golangci-lint,$(GOLANGCI_LINT_VERSION),github.com/golangci/golangci-lint/v2/cmd/golangci-lint))

.PHONY: tools lint-tools
tools: $(GORELEASER_STAMP) lint-tools
lint-tools: $(GOLANGCI_LINT_STAMP)

# gofmt, then golangci-lint (.golangci.yml; its staticcheck runs every
# check the standalone staticcheck would) on the root module, oraclegen and
# the test module. Every linter runs even when an earlier one fails, so one
# run shows all findings; the target fails if any did.
LINT_ROOT_STEPS := \
	'$(MAKE) --no-print-directory fmt-check' \
	'$(GOLANGCI_LINT) run ./...' \
	'cd test/versions/oraclegen && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...'
LINT_TEST_STEP := cd test && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

lint: lint-root lint-test-module

fmt-check:
	@test -z "$$(gofmt -l cmd pkg test)" || { echo "gofmt needed:"; gofmt -l cmd pkg test; false; }

lint-root: lint-tools
	@failed=0; for step in $(LINT_ROOT_STEPS); do \
		echo "$$step"; (eval "$$step") || failed=1; \
	done; exit $$failed

lint-test-module: lint-tools
	$(LINT_TEST_STEP)

# --- release (packaging) ---
# goreleaser reads the commit only when the clone has a remote; a work tree
# without one gets the project's URL for this command alone (not written to
# .git/config), so snapshots still stamp the real commit.
GORELEASER_ENV := $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/scale-preview/scale-preview.git)
# The packaging test passes a copy of .goreleaser.yaml limited to this
# machine's platform here.
GORELEASER_CONFIG ?= .goreleaser.yaml

.PHONY: release-snapshot packaging-test packaging-check

# Builds every archive of the goreleaser config into dist/ (no publishing):
# linux/darwin/windows x amd64/arm64, plus checksums.txt.
release-snapshot: $(GORELEASER_STAMP)
	$(GORELEASER_ENV) $(GORELEASER) check --config $(GORELEASER_CONFIG)
	$(GORELEASER_ENV) $(GORELEASER) release --snapshot --clean --config $(GORELEASER_CONFIG)

# Builds the six archives (make release-snapshot; PACKAGING_DIST=<dir> uses
# an existing build), validates the krew manifests, installs the plugin the
# way krew does and runs it through kubectl (help, --version, completion).
packaging-test:
	cd test && $(GO) test -count=1 -v -timeout 60m ./packaging/

# The same for this machine's archive only (.goreleaser.yaml with its
# platform list narrowed to this one): the manifests are still validated
# for every platform, with stand-in sums for the archives not built.
packaging-check: $(GORELEASER_STAMP)
	cd test && PACKAGING_SINGLE_TARGET=1 $(GO) test -count=1 -v -timeout 40m ./packaging/

# --- e2e extras ---
.PHONY: e2e-scale demo-cluster e2e-steering e2e-rollout

# Measures the plugin on a 5,000-pod Deployment against `kubectl get pods
# -o json` (median wall and CPU of 5, peak RSS, JSON size); prints a
# `scale 5000 pods:` line. E2E_SCALE_PODS=5000,50000 measures both sizes in
# one run (about 25 minutes on 2 cores).
e2e-scale:
	cd test && E2E_SCALE=1 $(GO) test -count=1 -v -run '^TestScale5000$$' -timeout 150m ./e2e/

# Starts the local control plane with a mid-rollout Deployment and a
# StatefulSet, prints the kubeconfig and sample commands; Ctrl-C stops it.
demo-cluster:
	cd test && E2E_DEMO=1 $(GO) test -count=1 -v -run '^TestDemoCluster$$' -timeout 0 ./e2e/

# Steering (--spare/--target/--target-node applied for real) and the
# mid-rollout Deployment scenarios alone.
e2e-steering:
	cd test && $(GO) test -count=1 -v -run '^TestSteering$$' -timeout 30m ./e2e/

e2e-rollout:
	cd test && $(GO) test -count=1 -v -run '^(TestRolloutScenarios|TestRandomRollouts)$$' -timeout 30m ./e2e/

# Node and zone failures under the real node lifecycle controller, all
# E2E_OUTAGE random scenarios (make check runs 3 of them).
.PHONY: e2e-outage
e2e-outage:
	cd test && $(GO) test -count=1 -v -run '^TestOutageE2E$$' -timeout 60m ./e2e/

# --- recorded oracles of older releases ---
# Each test/versions/v1_NN module pins that release's k8s.io/kubernetes
# (a whole release to compile: minutes each) and records what its real
# components answer on seeded random input: the ReplicaSet comparator for
# every ordered pair of pod sets under each gate combination
# ($(ORACLE_DIR)/v1.NN.json.gz), the kubelet's evictions
# (eviction-v1.NN.json.gz) and the scheduler's preemptions
# (preemption-v1.NN.json.gz), each where that release changed the model.
# Every file a module writes is checked.
# `make oracles` rewrites the committed files; `make oracles-check`
# regenerates them elsewhere and compares (same seed: same answers).
ORACLE_DIR ?= $(CURDIR)/test/conformance/testdata/oracles
override ORACLE_DIR := $(abspath $(ORACLE_DIR))
ORACLE_VERSIONS ?= v1_21 v1_25 v1_27 v1_29 v1_30 v1_31 v1_32 v1_33 v1_34

.PHONY: oracles oracles-check conformance-versions

# Regenerates the recorded oracles, then checks the engine against them.
conformance-versions: oracles
	cd test && $(GO) test -count=1 -run '^TestVersionOracles$$' -v ./conformance/

oracles:
	@mkdir -p $(ORACLE_DIR)
	@for v in $(ORACLE_VERSIONS); do \
		echo "== oracle $$v"; \
		(cd test/versions/$$v && ORACLE_DIR=$(ORACLE_DIR) $(GO) test -count=1 -v ./...) || exit 1; \
	done

oracles-check:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory oracles ORACLE_DIR=$$tmp; \
	for path in $$tmp/*.json.gz; do \
		f=$${path##*/}; \
		gzip -dc test/conformance/testdata/oracles/$$f > $$tmp/committed.json; \
		gzip -dc $$path > $$tmp/regenerated.json; \
		if cmp -s $$tmp/committed.json $$tmp/regenerated.json; then echo "oracles-check: $$f unchanged"; \
		else echo "oracles-check: $$f differs from a regeneration: run make oracles and review"; exit 1; fi; \
	done
