# scale-preview Makefile. `make test` is the command CI runs (see README).
GO ?= go
BIN := bin/kubectl-scale_preview
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
LDFLAGS := -X github.com/scale-preview/scale-preview/pkg/version.Version=$(VERSION) -X github.com/scale-preview/scale-preview/pkg/version.Commit=$(COMMIT)

.PHONY: build test unit conformance inprocess inprocess-long e2e e2e-short demo lint bench

# The whole suite, as CI runs it: unit and CLI tests, conformance against the
# real Kubernetes controller code (1.37, and 1.21/1.25/1.29/1.33 through
# recorded oracles), the real control-plane end-to-end suite, and the
# packaging test (goreleaser archives installed the way krew does).
test: lint unit conformance conformance-versions inprocess e2e packaging-test

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-scale_preview

# Unit and CLI tests, then every engine benchmark once in short mode so
# they keep compiling and running (figures come from `make bench`).
unit:
	$(GO) test ./...
	$(GO) test -short -run '^$$' -bench . -benchtime 1x ./pkg/engine/

# Checks the engine against k8s.io/kubernetes' own ActivePodsWithRanks.
conformance:
	cd test && $(GO) test -count=1 -v ./conformance/

# The real ReplicaSet and Deployment controllers in-process on a strict fake
# API, seeded random mid-rollout scale-ins each repeated 50 times, compared
# with the plugin (docs/deployments.md). The long suite runs 1,000 scenarios.
inprocess:
	cd test && $(GO) test -count=1 -v -short -timeout 20m ./inprocess/

inprocess-long:
	cd test && $(GO) test -count=1 -v -timeout 3h ./inprocess/

# Starts etcd, kube-apiserver and kube-controller-manager (built from the Go
# module proxy) on loopback and compares predictions with real scale-ins.
e2e:
	cd test && $(GO) test -count=1 -v -timeout 80m ./e2e/

e2e-short:
	cd test && $(GO) test -count=1 -v -short -timeout 40m ./e2e/

# A prediction from the shipped offline example; no cluster needed.
demo:
	$(GO) run ./cmd/kubectl-scale_preview -f examples/web.yaml deploy/web --replicas=3 -n shop --now 2025-01-01T12:00:00Z

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/engine/

lint:
	@test -z "$$(gofmt -l cmd pkg test)" || (gofmt -l cmd pkg test; exit 1)
	$(GO) vet ./...
	cd test && $(GO) vet ./...

# --- release (packaging) ---
# goreleaser is built from the Go module proxy into a repo-local tools dir
# (~7-11 min the first time on 2 cores). Pinned: v2.16.0 is the newest that
# builds with Go 1.26 (v2.18 needs Go 1.27). Changing GORELEASER_VERSION
# reinstalls it (the stamp file names the installed version).
GORELEASER_VERSION ?= v2.16.0
TOOLS_BIN := $(CURDIR)/bin/tools
GORELEASER := $(TOOLS_BIN)/goreleaser
GORELEASER_STAMP := $(TOOLS_BIN)/.goreleaser-$(GORELEASER_VERSION)
# goreleaser reads the commit only when the clone has a remote; a work tree
# without one gets the project's URL for this command alone (not written to
# .git/config), so snapshots still stamp the real commit.
GORELEASER_ENV := $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/scale-preview/scale-preview.git)

.PHONY: tools release-snapshot packaging-test goreleaser-missing

tools: $(GORELEASER_STAMP)

# (also reinstalled when the binary is gone while the stamp is not)
$(GORELEASER_STAMP): $(if $(wildcard $(GORELEASER)),,goreleaser-missing)
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) CGO_ENABLED=0 $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	@rm -f $(TOOLS_BIN)/.goreleaser-*
	@touch $@

# Builds every archive of .goreleaser.yaml into dist/ (no publishing):
# linux/darwin/windows x amd64/arm64, plus checksums.txt.
release-snapshot: $(GORELEASER_STAMP)
	$(GORELEASER_ENV) $(GORELEASER) check
	$(GORELEASER_ENV) $(GORELEASER) release --snapshot --clean

# Builds the archives (make release-snapshot; PACKAGING_DIST=<dir> uses an
# existing build), validates the krew manifests, installs the plugin the
# way krew does and runs it through kubectl (help, --version, completion).
packaging-test:
	cd test && $(GO) test -count=1 -v -timeout 60m ./packaging/

# --- e2e extras ---
.PHONY: e2e-scale demo-cluster e2e-steering e2e-rollout

# Measures the plugin on a 5,000-pod Deployment against `kubectl get pods
# -o json` (median of 5, peak RSS, JSON size); prints a `scale5000:` line.
e2e-scale:
	cd test && E2E_SCALE=1 $(GO) test -count=1 -v -run '^TestScale5000$$' -timeout 60m ./e2e/

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

# --- per-version conformance ---
# Each test/versions/v1_NN module pins that release's k8s.io/kubernetes and
# writes the real ActivePodsWithRanks.Less of every ordered pair of random
# pod sets, under each gate combination, to $(ORACLE_DIR)/v1.NN.json;
# TestVersionOracles then checks pkg/rules + pkg/engine against all of them.
# (made absolute: every step runs in another directory)
ORACLE_DIR ?= $(CURDIR)/test/.oracle
override ORACLE_DIR := $(abspath $(ORACLE_DIR))
ORACLE_VERSIONS ?= v1_21 v1_25 v1_29 v1_33

.PHONY: conformance-versions

conformance-versions:
	@mkdir -p $(ORACLE_DIR)
	@for v in $(ORACLE_VERSIONS); do \
		echo "== oracle $$v"; \
		(cd test/versions/$$v && ORACLE_DIR=$(ORACLE_DIR) $(GO) test -count=1 ./...) || exit 1; \
	done
	cd test && ORACLE_DIR=$(ORACLE_DIR) $(GO) test -count=1 -run TestVersionOracles -v ./conformance/
